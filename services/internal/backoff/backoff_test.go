package backoff

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestBackoffDoublesUpToMax(t *testing.T) {
	b := Backoff{Min: time.Millisecond, Max: 5 * time.Millisecond}
	var got []time.Duration
	for range 5 {
		got = append(got, b.Next())
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	want := []time.Duration{1, 2, 4, 5, 5}
	for i := range want {
		if got[i] != want[i]*time.Millisecond {
			t.Fatalf("waits %v, want 1ms 2ms 4ms 5ms 5ms", got)
		}
	}
	b.Reset()
	if b.Next() != time.Millisecond {
		t.Fatalf("after Reset the wait is %s, want Min", b.Next())
	}
}

func TestBackoffJitterStaysInRange(t *testing.T) {
	b := Backoff{Min: 20 * time.Millisecond, Max: 20 * time.Millisecond, Jitter: true}
	for range 5 {
		start := time.Now()
		if err := b.Wait(context.Background()); err != nil {
			t.Fatal(err)
		}
		// [w/2, 3w/2] plus scheduling slack on a loaded machine.
		if d := time.Since(start); d < 10*time.Millisecond || d > 200*time.Millisecond {
			t.Fatalf("jittered wait took %s, want about 10-30ms", d)
		}
	}
}

func TestWaitEndsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := Backoff{Min: time.Hour, Max: time.Hour}
	if err := b.Wait(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait on an ended context = %v, want context.Canceled", err)
	}
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on an ended context = %v, want context.Canceled", err)
	}
}
