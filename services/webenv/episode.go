package webenv

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"
	"time"
)

// deadlineGrace is how long after the page's own time limit the server still
// accepts events: the page's timer starts a little before the server's
// clock, and a slow round trip must not turn a success into a time-out.
const deadlineGrace = 2 * time.Second

// Limits on what a page may report, so bad input cannot grow memory.
const (
	maxEventsPerBatch = 256
	maxValueLen       = 2000
	maxEventsPerEp    = 5000
)

// Episode is the server side of one episode: its problem and state.
type Episode struct {
	ID      string
	Problem *Problem
	Created time.Time

	mu      sync.Mutex
	st      *State
	events  int
	version int
	done    bool
	timeout bool
	errors  map[string]string
}

func newEpisode(p *Problem, now time.Time) *Episode {
	var b [8]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	st := newState()
	for k, v := range p.Init {
		st.Values[k] = v
	}
	return &Episode{ID: hex.EncodeToString(b[:]), Problem: p, Created: now, st: st}
}

// Elapsed returns the time since the episode started.
func (e *Episode) Elapsed(now time.Time) time.Duration { return now.Sub(e.Created) }

// expiredLocked ends the episode when its time is up.
func (e *Episode) expiredLocked(now time.Time) bool {
	if !e.done && now.Sub(e.Created) > e.Problem.MaxTime+deadlineGrace {
		e.done, e.timeout = true, true
		e.version++
	}
	return e.done
}

// Apply applies a batch of events reported by the page and returns the new
// score.
func (e *Episode) Apply(evs []Event, now time.Time) Score {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.expiredLocked(now) {
		return e.scoreLocked()
	}
	e.errors = nil
	for _, ev := range evs {
		if e.done || e.events >= maxEventsPerEp {
			break
		}
		e.events++
		if len(ev.V) > maxValueLen {
			ev.V = ev.V[:maxValueLen]
		}
		if len(ev.K) > 200 {
			continue
		}
		terminal := false
		switch ev.T {
		case "set":
			e.st.Values[ev.K] = ev.V
		case "click":
			e.st.Clicks = append(e.st.Clicks, ev)
			terminal = e.Problem.EndKeys[ev.K]
		case "enter":
			e.st.Clicks = append(e.st.Clicks, ev)
			e.st.Values[ev.K] = ev.V
			terminal = e.Problem.EnterEnds
		case "msg":
			e.st.Messages = append(e.st.Messages, ev.V)
			terminal = e.Problem.MsgEnds
		case "timeout":
			e.done, e.timeout = true, true
		}
		if terminal {
			e.tryEndLocked(ev)
		}
	}
	e.version++
	return e.scoreLocked()
}

// tryEndLocked ends the episode with ev unless the form does not validate.
func (e *Episode) tryEndLocked(ev Event) {
	if v := e.Problem.Validate; v != nil {
		if errs := v(e.st); len(errs) > 0 {
			e.errors = errs
			return
		}
	}
	e.st.End = &ev
	e.done = true
}

// Page serves a page of a multi-page site, records the visit, and applies a
// terminal submit.
func (e *Episode) Page(req PageRequest, now time.Time) (PageResult, Score) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expiredLocked(now)
	if req.Method == "GET" {
		visit := req.Path
		if q := req.Query.Encode(); q != "" {
			visit += "?" + q
		}
		if len(e.st.Visits) < maxEventsPerEp {
			e.st.Visits = append(e.st.Visits, visit)
		}
	}
	if req.Method == "POST" && !e.done {
		for k, vs := range req.Form {
			if len(vs) > 0 && len(k) <= 200 {
				e.st.Values[k] = truncate(vs[0], maxValueLen)
			}
		}
	}
	req.State = e.st
	if e.done && req.Method == "POST" {
		// A finished episode's state is frozen: nothing acts any more.
		return PageResult{HTML: `<p class="wob-over">This task is over.</p>`}, e.scoreLocked()
	}
	res := e.Problem.Pages(req)
	if res.End && !e.done {
		e.tryEndLocked(Event{T: "submit", K: res.EndKey, V: res.EndValue})
	}
	e.version++
	return res, e.scoreLocked()
}

// Score returns the current score.
func (e *Episode) Score(now time.Time) Score {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.expiredLocked(now)
	return e.scoreLocked()
}

func (e *Episode) scoreLocked() Score {
	results, partial, success := Evaluate(e.Problem.Facts, e.st)
	s := Score{Episode: e.ID, Version: e.version, Partial: partial, Facts: results, Errors: e.errors}
	if e.done {
		s.Done = true
		switch {
		case e.timeout:
			s.Raw, s.Reason = -1, "timed out"
		case success:
			s.Raw, s.Success, s.Reason = 1, true, "success"
		default:
			var missing []string
			for _, r := range results {
				if !r.Met {
					missing = append(missing, r.Name)
				}
			}
			s.Raw, s.Reason = -1, "facts not met: "+strings.Join(missing, "; ")
		}
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// store keeps episodes in memory, dropping the oldest beyond a bound or a TTL.
type store struct {
	mu    sync.Mutex
	m     map[string]*Episode
	order []string
	max   int
	ttl   time.Duration
}

func newStore(max int, ttl time.Duration) *store {
	return &store{m: map[string]*Episode{}, max: max, ttl: ttl}
}

func (s *store) add(e *Episode, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[e.ID] = e
	s.order = append(s.order, e.ID)
	for len(s.order) > 0 {
		old, ok := s.m[s.order[0]]
		if ok && len(s.order) <= s.max && now.Sub(old.Created) < s.ttl {
			break
		}
		delete(s.m, s.order[0])
		s.order = s.order[1:]
	}
}

func (s *store) get(id string) (*Episode, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.m[id]
	return e, ok
}
