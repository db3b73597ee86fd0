package eventspb

// NextObsEventID is the event id of a transition's s_t+1: next_obs_event_id,
// or, in a transition written before that field (issue 18), the id of the
// embedded next_obs. Empty when the transition has no next state.
func NextObsEventID(x *Transition) string {
	if id := x.GetNextObsEventId(); id != "" {
		return id
	}
	return x.GetNextObs().GetEnvelope().GetEventId()
}
