package policy

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// ErrClosed is returned by a Server after Close.
var ErrClosed = errors.New("policy server closed")

// Server is the in-process batching inference server that all executors of
// an actor share: Submit queues one observation's features, and one loop
// runs them in batches of up to max batch, waiting at most max wait after
// the first request for others to join. Swap replaces the model between
// batches without stopping callers; every Output carries the version of the
// model that computed it.
type Server struct {
	opts    options
	arch    Architecture
	reqs    chan *request
	swaps   chan *swap
	done    chan struct{}
	exited  chan struct{}
	closing sync.Once
	version atomic.Uint64
}

type request struct {
	f     *Features
	reply chan result
}

type result struct {
	out *Output
	err error
}

type swap struct {
	sess    *Session
	version uint64
	applied chan struct{}
}

// NewServer loads the model and starts the batching loop.
func NewServer(onnx []byte, version uint64, opts ...Option) (*Server, error) {
	o := buildOptions(opts)
	sess, err := newSession(onnx, o)
	if err != nil {
		return nil, err
	}
	s := &Server{
		opts:   o,
		arch:   sess.Arch(),
		reqs:   make(chan *request),
		swaps:  make(chan *swap),
		done:   make(chan struct{}),
		exited: make(chan struct{}),
	}
	s.version.Store(version)
	go s.loop(sess, version)
	return s, nil
}

// Arch returns the architecture of the served model; features must be built
// with it.
func (s *Server) Arch() Architecture { return s.arch }

// Version returns the version of the model that the next batch will use.
func (s *Server) Version() uint64 { return s.version.Load() }

// Submit runs one sample through the next batch and returns its outputs. It
// blocks until the result is ready, ctx ends, or the server closes.
func (s *Server) Submit(ctx context.Context, f *Features) (*Output, error) {
	if err := s.arch.checkFeatures(f); err != nil {
		return nil, err
	}
	r := &request{f: f, reply: make(chan result, 1)}
	select {
	case s.reqs <- r:
	case <-s.done:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case res := <-r.reply:
		return res.out, res.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Swap loads new weights and makes them serve from the next batch on. The
// model is loaded while the old one keeps serving; Swap returns once the
// new one is installed. Weights of another architecture are refused: the
// executors' features would not fit them.
func (s *Server) Swap(ctx context.Context, onnx []byte, version uint64) error {
	sess, err := newSession(onnx, s.opts)
	if err != nil {
		return err
	}
	if a := sess.Arch(); !a.SameShapes(&s.arch) {
		sess.Close()
		return fmt.Errorf("unable to swap to version %d: its architecture differs from the served one (restart the actor to change it)", version)
	}
	sw := &swap{sess: sess, version: version, applied: make(chan struct{})}
	select {
	case s.swaps <- sw:
	case <-s.done:
		sess.Close()
		return ErrClosed
	case <-ctx.Done():
		sess.Close()
		return ctx.Err()
	}
	select {
	case <-sw.applied:
		return nil
	case <-ctx.Done():
		return ctx.Err() // it still gets installed
	}
}

// Close stops accepting requests, finishes the queued ones and releases the
// model, waiting at most until ctx ends.
func (s *Server) Close(ctx context.Context) error {
	s.closing.Do(func() { close(s.done) })
	select {
	case <-s.exited:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("unable to close the policy server: %w", ctx.Err())
	}
}

func (s *Server) loop(sess *Session, version uint64) {
	defer close(s.exited)
	defer func() { sess.Close() }()
	batch := make([]*request, 0, s.opts.maxBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		batch = batch[:0]
		select {
		case r := <-s.reqs:
			batch = append(batch, r)
		case sw := <-s.swaps:
			old := sess
			sess, version = sw.sess, sw.version
			s.version.Store(version)
			close(sw.applied)
			old.Close()
			s.opts.logger.Info("policy swapped", "version", version)
			continue
		case <-s.done:
			// Serve whoever already handed a request over, then exit.
			for drained := false; !drained; {
				select {
				case r := <-s.reqs:
					batch = append(batch, r)
					if len(batch) == s.opts.maxBatch {
						s.run(sess, version, batch)
						batch = batch[:0]
					}
				default:
					drained = true
				}
			}
			if len(batch) > 0 {
				s.run(sess, version, batch)
			}
			return
		}
		timer.Reset(s.opts.maxWait)
	collect:
		for len(batch) < s.opts.maxBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			case <-timer.C:
				break collect
			case <-s.done:
				break collect
			}
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		s.run(sess, version, batch)
	}
}

// run computes one batch and answers its requests.
func (s *Server) run(sess *Session, version uint64, batch []*request) {
	fs := make([]*Features, len(batch))
	for i, r := range batch {
		fs[i] = r.f
	}
	b, err := s.arch.Stack(fs)
	var outs *Outputs
	var took time.Duration
	if err == nil {
		start := time.Now()
		outs, err = sess.Run(b)
		took = time.Since(start)
	}
	for i, r := range batch {
		if err != nil {
			r.reply <- result{err: err}
			continue
		}
		o := outs.Sample(&s.arch, i)
		o.Version, o.BatchSize, o.InferenceMicros = version, len(batch), took.Microseconds()
		r.reply <- result{out: o}
	}
}

// checkFeatures rejects features built for other shapes before they can
// spoil a whole batch.
func (a *Architecture) checkFeatures(f *Features) error {
	if f == nil {
		return errors.New("unable to submit nil features")
	}
	fields := f.fields()
	for i, spec := range a.InputSpecs() {
		n := 1
		for _, d := range spec.Shape {
			n *= int(d)
		}
		var got int
		switch v := fields[i].(type) {
		case []float32:
			got = len(v)
		case []int64:
			got = len(v)
		}
		if got != n {
			return fmt.Errorf("unable to submit features: %s has %d values, want %d (built for another architecture?)", spec.Name, got, n)
		}
	}
	return nil
}
