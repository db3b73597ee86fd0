// Package backoff is the services' one retry wait: exponential from a floor
// to a cap, optionally jittered, and cut short by the context. The browser
// pool, the actor's executors and the recorder (ClickHouse connect and
// insert) each had a hand-written copy of this loop.
package backoff

import (
	"context"
	"math/rand/v2"
	"time"
)

// Backoff is the wait between attempts of one retry loop: Min first, then
// doubled after every wait up to Max. The zero value of the unexported
// state is the start; a Backoff is used by one goroutine.
type Backoff struct {
	Min, Max time.Duration
	// Jitter spreads each wait over [w/2, 3w/2], so that clients that
	// failed together (recorders of one group that lost ClickHouse) do not
	// retry in lockstep.
	Jitter bool

	next time.Duration
}

// Next is the wait the next Wait sleeps, before jitter (for logs).
func (b *Backoff) Next() time.Duration {
	if b.next == 0 {
		return b.Min
	}
	return b.next
}

// Wait sleeps for Next (jittered when asked) and doubles the wait after it,
// up to Max. It returns ctx.Err() as soon as ctx ends.
func (b *Backoff) Wait(ctx context.Context) error {
	w := b.Next()
	b.next = min(2*w, max(b.Max, b.Min))
	if b.Jitter && w > 0 {
		w = w/2 + rand.N(w+1)
	}
	return Sleep(ctx, w)
}

// Reset starts the waits from Min again (after a success).
func (b *Backoff) Reset() { b.next = 0 }

// Sleep waits d, or until ctx ends, when it returns ctx.Err().
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
