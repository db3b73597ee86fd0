package webenv

import (
	"fmt"
	"net/http"
	"time"
)

// DelayHeader carries, as Server-Timing entries, the delay the server drew
// for a request from its profile ("wobdelay;dur=<ms>") and the time it then
// waited, measured around the wait ("wobwait;dur=<ms>"). The wait is never
// shorter than the delay; on a loaded machine it is longer (late timer
// wake-ups), which is the machine's latency, not the profile's.
const DelayHeader = "Server-Timing"

// latencyMiddleware delays every request (but the health check) by a delay
// drawn from the profile.
func latencyMiddleware(s *delaySampler, next http.Handler) http.Handler {
	if _, none := s.d.(NoDelay); none {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" {
			next.ServeHTTP(w, r)
			return
		}
		d := s.sample()
		t0 := time.Now()
		if d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		waited := time.Since(t0)
		w.Header().Add(DelayHeader, fmt.Sprintf("wobdelay;dur=%.3f, wobwait;dur=%.3f", msf(d), msf(waited)))
		next.ServeHTTP(w, r)
	})
}

func msf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
