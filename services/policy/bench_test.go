package policy

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// benchFeatures returns n distinct featurized click pages.
func benchFeatures(b *testing.B, a *Architecture, n int) []*Features {
	fs := make([]*Features, n)
	for i := range fs {
		obs := clickButtonObs(b)
		obs.Instruction = fmt.Sprintf(`Click on the "%d" button.`, i)
		f, err := a.Featurize(obs)
		if err != nil {
			b.Fatal(err)
		}
		fs[i] = f
	}
	return fs
}

// BenchmarkInferenceBatching measures ONNX Runtime's per-sample latency of
// the default policy at batch 1 (the baseline: one executor at a time) and
// at batch 32 in the same run, and reports both with their ratio.
func BenchmarkInferenceBatching(b *testing.B) {
	a := DefaultArchitecture()
	s, err := NewSession(testModel(b, a, 1))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	fs := benchFeatures(b, &a, 32)
	one, err := a.Stack(fs[:1])
	if err != nil {
		b.Fatal(err)
	}
	all, err := a.Stack(fs)
	if err != nil {
		b.Fatal(err)
	}
	// Warm up both shapes (first runs allocate and plan).
	for range 3 {
		if _, err := s.Run(one); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Run(all); err != nil {
			b.Fatal(err)
		}
	}
	var t1, t32 time.Duration
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if _, err := s.Run(one); err != nil {
			b.Fatal(err)
		}
		t1 += time.Since(start)
		start = time.Now()
		if _, err := s.Run(all); err != nil {
			b.Fatal(err)
		}
		t32 += time.Since(start)
	}
	b.StopTimer()
	per1 := float64(t1.Microseconds()) / float64(b.N)
	per32 := float64(t32.Microseconds()) / float64(b.N) / 32
	b.ReportMetric(per1, "us/sample@b1")
	b.ReportMetric(per32, "us/sample@b32")
	if per32 > 0 {
		b.ReportMetric(per1/per32, "b1/b32")
	}
	b.ReportMetric(0, "ns/op") // the pair's time is meaningless; the metrics above carry the result
}

// BenchmarkServerSubmit measures the batching server end to end: 32
// concurrent executors (max batch 32, max wait 2ms) against one executor on
// a server that never waits (the baseline), reporting per-request wall time
// for each, the ratio and the mean batch size the server formed.
func BenchmarkServerSubmit(b *testing.B) {
	a := DefaultArchitecture()
	model := testModel(b, a, 1)
	batching, err := NewServer(model, 1, WithMaxBatch(32), WithMaxWait(2*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer batching.Close(context.Background())
	unbatched, err := NewServer(model, 1, WithMaxBatch(1), WithMaxWait(0))
	if err != nil {
		b.Fatal(err)
	}
	defer unbatched.Close(context.Background())
	fs := benchFeatures(b, &a, 32)
	ctx := context.Background()
	run := func(srv *Server, workers, perWorker int) (time.Duration, float64) {
		var wg sync.WaitGroup
		var batchSum atomic.Int64
		start := time.Now()
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range perWorker {
					o, err := srv.Submit(ctx, fs[w%len(fs)])
					if err != nil {
						b.Error(err)
						return
					}
					batchSum.Add(int64(o.BatchSize))
				}
			}()
		}
		wg.Wait()
		n := workers * perWorker
		return time.Since(start) / time.Duration(n), float64(batchSum.Load()) / float64(n)
	}
	run(batching, 32, 2) // warm up
	run(unbatched, 1, 4)
	b.ResetTimer()
	var single, batched time.Duration
	var meanBatch float64
	for range b.N {
		s, _ := run(unbatched, 1, 32)
		m, mb := run(batching, 32, 4)
		single += s
		batched += m
		meanBatch += mb
	}
	b.StopTimer()
	b.ReportMetric(float64(single.Microseconds())/float64(b.N), "us/req@1exec")
	b.ReportMetric(float64(batched.Microseconds())/float64(b.N), "us/req@32exec")
	if batched > 0 {
		b.ReportMetric(float64(single)/float64(batched), "speedup")
	}
	b.ReportMetric(meanBatch/float64(b.N), "mean-batch@32exec")
	b.ReportMetric(0, "ns/op")
}
