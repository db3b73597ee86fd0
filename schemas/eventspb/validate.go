package eventspb

import (
	"errors"
	"fmt"
	"math"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Validate applies the schema rules that protobuf itself cannot express:
// the envelope is present with an event id and a schema version, every enum
// holds a declared value (anywhere in the message), and the event's own
// required fields are set. Decoders and Marshal call it.
//
// Unknown enum values are rejected even though proto3 would carry them, so a
// new enum value must reach consumers before producers emit it.
func Validate(ev Event) error {
	if err := validateEnvelope(ev.GetEnvelope()); err != nil {
		return err
	}
	if err := validateEnums(ev.ProtoReflect(), ""); err != nil {
		return err
	}
	return ev.validate()
}

func validateEnvelope(e *Envelope) error {
	switch {
	case e == nil:
		return errors.New("envelope is missing")
	case e.GetEventId() == "":
		return errors.New("envelope.event_id is empty")
	case e.GetSchemaVersion() == 0:
		return errors.New("envelope.schema_version is 0")
	}
	return nil
}

// validateEnums walks every populated enum or message field; the schema has
// no recursive messages, so the walk is bounded by the schema's depth.
// It is on every consumer's hot path (the recorder decodes every event), so
// scalar fields are skipped before any work and the field path of an error
// is built only when there is an error.
func validateEnums(m protoreflect.Message, path string) error {
	if err := walkEnums(m); err != nil {
		return fmt.Errorf("%s%s: %s", path, err.path, err.msg)
	}
	return nil
}

// enumError is an unknown enum value; path is built on the way back up.
type enumError struct{ path, msg string }

func walkEnums(m protoreflect.Message) *enumError {
	for _, fd := range enumPaths(m.Descriptor()) {
		if !m.Has(fd) {
			continue
		}
		v := m.Get(fd)
		switch {
		case fd.IsMap():
			var err *enumError
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				if err = walkValue(fd.MapValue(), mv); err != nil {
					err.path = fmt.Sprintf("%s[%v]%s", fd.Name(), k.Interface(), err.path)
				}
				return err == nil
			})
			if err != nil {
				return err
			}
		case fd.IsList():
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				if err := walkValue(fd, l.Get(i)); err != nil {
					err.path = fmt.Sprintf("%s[%d]%s", fd.Name(), i, err.path)
					return err
				}
			}
		default:
			if err := walkValue(fd, v); err != nil {
				err.path = string(fd.Name()) + err.path
				return err
			}
		}
	}
	return nil
}

// enumPathCache maps a message's full name to its fields that can hold an
// enum value somewhere below them; the others are never looked at.
var enumPathCache sync.Map

func enumPaths(md protoreflect.MessageDescriptor) []protoreflect.FieldDescriptor {
	if v, ok := enumPathCache.Load(md.FullName()); ok {
		return v.([]protoreflect.FieldDescriptor)
	}
	var out []protoreflect.FieldDescriptor
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd2 := fd.MapValue()
			if fd2.Kind() == protoreflect.EnumKind || (isMessage(fd2) && hasEnums(fd2.Message(), map[protoreflect.FullName]bool{})) {
				out = append(out, fd)
			}
			continue
		}
		if fd.Kind() == protoreflect.EnumKind || (isMessage(fd) && hasEnums(fd.Message(), map[protoreflect.FullName]bool{})) {
			out = append(out, fd)
		}
	}
	enumPathCache.Store(md.FullName(), out)
	return out
}

func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd.Kind() == protoreflect.MessageKind || fd.Kind() == protoreflect.GroupKind
}

// hasEnums reports whether md holds an enum field at any depth. seen guards
// against recursive messages (none today, but the walk must terminate).
func hasEnums(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool) bool {
	if seen[md.FullName()] {
		return false
	}
	seen[md.FullName()] = true
	fields := md.Fields()
	for i := 0; i < fields.Len(); i++ {
		fd := fields.Get(i)
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Kind() == protoreflect.EnumKind || (isMessage(fd) && hasEnums(fd.Message(), seen)) {
			return true
		}
	}
	return false
}

// walkValue returns an error whose path is relative to the value: "" for
// the value itself, ".field..." inside a message.
func walkValue(fd protoreflect.FieldDescriptor, v protoreflect.Value) *enumError {
	switch fd.Kind() {
	case protoreflect.EnumKind:
		if fd.Enum().Values().ByNumber(v.Enum()) == nil {
			return &enumError{msg: fmt.Sprintf("unknown %s value %d", fd.Enum().Name(), v.Enum())}
		}
	case protoreflect.MessageKind, protoreflect.GroupKind:
		if err := walkEnums(v.Message()); err != nil {
			err.path = "." + err.path
			return err
		}
	}
	return nil
}

// firstErr keeps error texts on one line (they become dead-letter reasons);
// the first broken rule is enough to reject an event.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func required(field, value string) error {
	if value == "" {
		return fmt.Errorf("%s is empty", field)
	}
	return nil
}

// finite rejects NaN and ±Inf: one of them in a reward or log-prob turns
// every gradient of the batch into NaN.
func finite(field string, v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("%s is not finite: %v", field, v)
	}
	return nil
}

func (x *Task) validate() error {
	return required("task_id", x.GetTaskId())
}

func (x *Observation) validate() error {
	return firstErr(
		required("envelope.episode_id", x.GetEnvelope().GetEpisodeId()),
		finite("stability_score", x.GetStabilityScore()),
	)
}

func (x *Action) validate() error {
	return firstErr(
		required("envelope.episode_id", x.GetEnvelope().GetEpisodeId()),
		validateActionBody("", x),
	)
}

// validateActionBody holds the rules shared by an Action event and the
// action embedded in a Transition.
func validateActionBody(prefix string, a *Action) error {
	var err error
	if a.GetType() == ActionType_ACTION_TYPE_UNSPECIFIED {
		err = fmt.Errorf("%stype is ACTION_TYPE_UNSPECIFIED", prefix)
	}
	return firstErr(err,
		finite(prefix+"log_prob", a.GetLogProb()),
		finite(prefix+"value", a.GetValue()),
		validateLM(prefix+"lm.", a.GetLm()),
	)
}

// validateLM: a generation's per-token fields line up (the ids may be
// absent) and its log-probs are finite and at most 0.
func validateLM(prefix string, m *LMOutput) error {
	if m == nil {
		return nil
	}
	n := len(m.GetTokenLogprobs())
	if len(m.GetTokens()) != n || len(m.GetTokenIds()) != 0 && len(m.GetTokenIds()) != n {
		return fmt.Errorf("%stokens: %d texts, %d ids, %d log-probs", prefix, len(m.GetTokens()), len(m.GetTokenIds()), n)
	}
	for i, lp := range m.GetTokenLogprobs() {
		if err := finite(fmt.Sprintf("%stoken_logprobs[%d]", prefix, i), float64(lp)); err != nil {
			return err
		}
		if lp > 0 {
			return fmt.Errorf("%stoken_logprobs[%d] is %g > 0", prefix, i, lp)
		}
	}
	return nil
}

func (x *Reward) validate() error {
	return firstErr(
		required("envelope.episode_id", x.GetEnvelope().GetEpisodeId()),
		finite("reward", x.GetReward()),
		finite("raw_reward", x.GetRawReward()),
	)
}

func (x *Telemetry) validate() error {
	return required("actor_id", x.GetActorId())
}

func (x *Transition) validate() error {
	errs := []error{
		required("episode_id", x.GetEpisodeId()),
		finite("reward", x.GetReward()),
		finite("log_prob_old", x.GetLogProbOld()),
	}
	if env := x.GetEnvelope(); env.GetEpisodeId() != "" &&
		(env.GetEpisodeId() != x.GetEpisodeId() || env.GetStep() != x.GetStep()) {
		errs = append(errs, fmt.Errorf("envelope episode/step %q/%d differ from %q/%d",
			env.GetEpisodeId(), env.GetStep(), x.GetEpisodeId(), x.GetStep()))
	}
	if x.GetObs() == nil {
		errs = append(errs, errors.New("obs is missing"))
	}
	if x.GetAction() == nil {
		errs = append(errs, errors.New("action is missing"))
	} else {
		errs = append(errs, validateActionBody("action.", x.GetAction()))
	}
	if NextObsEventID(x) == "" && !x.GetDone() {
		errs = append(errs, errors.New("next_obs_event_id is missing and done is false"))
	}
	return firstErr(errs...)
}

func (x *Episode) validate() error {
	return firstErr(
		required("task_id", x.GetTaskId()),
		required("episode_id", x.GetEpisodeId()),
		finite("total_return", x.GetTotalReturn()),
	)
}

func (x *Weights) validate() error {
	var err error
	if len(x.GetOnnx()) == 0 {
		err = errors.New("onnx is empty")
	}
	return firstErr(required("policy_name", x.GetPolicyName()), err)
}

func (x *DeadLetter) validate() error {
	var err error
	if x.GetReasonCode() == ReasonCode_REASON_CODE_UNSPECIFIED {
		err = errors.New("reason_code is REASON_CODE_UNSPECIFIED")
	}
	return firstErr(required("source_topic", x.GetSourceTopic()), err)
}
