package loadtest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/asyncwebrl/asyncwebrl/schemas/eventspb"
)

// Version is one weights record of a policy as a read-committed reader
// (an actor, a resuming learner) saw it.
type Version struct {
	Version, Parent uint64
	Producer        string
	// Seen is when the watcher read it: a commit's latest moment.
	Seen time.Time
}

// WeightsWatch follows one policy's versions on the weights topic from its
// start, read committed, for as long as it runs: it sees every version
// before compaction could drop one, and when each became visible.
type WeightsWatch struct {
	cl     *kgo.Client
	topic  string
	policy string
	done   chan struct{}

	mu       sync.Mutex
	versions []Version
	next     int64 // the offset after the last record read (markers included)
	bad      int   // undecodable records of the policy
}

// WatchWeights starts following policy on topic with a client of its own
// (newClient adds seeds and security); Close stops it.
func WatchWeights(newClient func(...kgo.Opt) (*kgo.Client, error), topic, policy string) (*WeightsWatch, error) {
	// As services/internal/weightstopic reads it (internal to services/):
	// committed records only, markers kept (the committed end lies past
	// the last one), fetches above the largest model the topic takes.
	cl, err := newClient(kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		kgo.FetchMaxBytes(80<<20), kgo.FetchMaxPartitionBytes(80<<20), kgo.BrokerMaxReadBytes(100<<20))
	if err != nil {
		return nil, err
	}
	w := &WeightsWatch{cl: cl, topic: topic, policy: policy, done: make(chan struct{})}
	go w.run()
	return w, nil
}

func (w *WeightsWatch) run() {
	defer close(w.done)
	for {
		fs := w.cl.PollFetches(context.Background())
		if fs.IsClientClosed() {
			return
		}
		now := time.Now()
		w.mu.Lock()
		fs.EachRecord(func(r *kgo.Record) {
			w.next = max(w.next, r.Offset+1)
			if r.Attrs.IsControl() || string(r.Key) != w.policy || len(r.Value) == 0 {
				return // a transaction marker, another policy, a tombstone
			}
			ev, err := eventspb.DecodeWeights(r.Value)
			if err != nil {
				w.bad++
				return
			}
			w.versions = append(w.versions, Version{Version: ev.GetVersion(), Parent: ev.GetParentVersion(),
				Producer: ev.GetEnvelope().GetProducer(), Seen: now})
		})
		w.mu.Unlock()
	}
}

// Close stops the watch.
func (w *WeightsWatch) Close() {
	w.cl.Close()
	<-w.done
}

// Versions are the versions read so far, in topic order.
func (w *WeightsWatch) Versions() []Version {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Version(nil), w.versions...)
}

// CaughtUp waits until the watch has read the topic up to its committed
// end now (the last stable offset: an open transaction holds nothing a
// reader may see), polling every interval.
func (w *WeightsWatch) CaughtUp(ctx context.Context, adm *kadm.Client, interval time.Duration) error {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	ends, err := adm.ListCommittedOffsets(lctx, w.topic)
	cancel()
	if err == nil {
		err = ends.Error()
	}
	if err != nil {
		return fmt.Errorf("unable to read the end of %s: %w", w.topic, err)
	}
	var end int64
	ends.Each(func(o kadm.ListedOffset) { end = max(end, o.Offset) }) // one partition
	for {
		w.mu.Lock()
		next := w.next
		w.mu.Unlock()
		if next >= end {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("unable to read %s to its committed end %d (at %d): %w", w.topic, end, next, ctx.Err())
		case <-time.After(interval):
		}
	}
}

// NewerThan waits until a version above v is read (any version when
// !any) and returns the first such, polling every interval.
func (w *WeightsWatch) NewerThan(ctx context.Context, v uint64, any bool, interval time.Duration) (Version, error) {
	for {
		for _, got := range w.Versions() {
			if !any || got.Version > v {
				return got, nil
			}
		}
		select {
		case <-ctx.Done():
			return Version{}, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// FirstBy waits until a version published by producer is read and returns
// the first, polling every interval.
func (w *WeightsWatch) FirstBy(ctx context.Context, producer string, interval time.Duration) (Version, error) {
	for {
		for _, got := range w.Versions() {
			if got.Producer == producer {
				return got, nil
			}
		}
		select {
		case <-ctx.Done():
			return Version{}, ctx.Err()
		case <-time.After(interval):
		}
	}
}

// VersionCheck is the weights topic's verdict: a learner, however often it
// died or was fenced, publishes one chain of versions, 1, 2, 3, ..., each
// the child of the one before.
type VersionCheck struct {
	Records int // the policy's committed records
	Last    uint64
	// Skipped are versions below Last never published; Repeated versions
	// published more than once; BadParents records whose parent is not
	// version - 1 (a fork).
	Skipped, Repeated, BadParents int
	// Undecodable counts records of the policy that were not weights.
	Undecodable int
	// Examples are a few of the problems, for the report.
	Examples []string
}

// Check is the verdict on what the watch read.
func (w *WeightsWatch) Check() VersionCheck {
	w.mu.Lock()
	bad := w.bad
	w.mu.Unlock()
	c := CheckVersions(w.Versions())
	c.Undecodable = bad
	return c
}

// CheckVersions checks vs, in topic order, for one unbroken chain from 1.
func CheckVersions(vs []Version) VersionCheck {
	c := VersionCheck{Records: len(vs)}
	seen := map[uint64]bool{}
	example := func(format string, args ...any) {
		if len(c.Examples) < 5 {
			c.Examples = append(c.Examples, fmt.Sprintf(format, args...))
		}
	}
	for _, v := range vs {
		if seen[v.Version] {
			c.Repeated++
			example("version %d again (by %s)", v.Version, v.Producer)
		}
		seen[v.Version] = true
		if v.Parent+1 != v.Version {
			c.BadParents++
			example("version %d has parent %d (by %s)", v.Version, v.Parent, v.Producer)
		}
		c.Last = max(c.Last, v.Version)
	}
	for v := uint64(1); v < c.Last; v++ {
		if !seen[v] {
			c.Skipped++
			example("version %d never published", v)
		}
	}
	return c
}

// OK: at least one version, one chain, nothing repeated, skipped or
// undecodable.
func (c VersionCheck) OK() bool {
	return c.Records > 0 && c.Skipped == 0 && c.Repeated == 0 && c.BadParents == 0 && c.Undecodable == 0
}

// Verdict is c as a topic's verdict line: expected the versions 1..Last,
// found the records, lost the skipped versions, duplicated the repeats and
// forks (a version whose parent is not the one before it).
func (c VersionCheck) Verdict(name string) Verdict {
	return Verdict{Name: name, Expected: int(c.Last), Found: c.Records, Lost: c.Skipped, Duplicated: c.Repeated + c.BadParents}
}

func (c VersionCheck) String() string {
	s := fmt.Sprintf("%d records, versions up to %d: %d skipped, %d repeated, %d with a wrong parent, %d undecodable",
		c.Records, c.Last, c.Skipped, c.Repeated, c.BadParents, c.Undecodable)
	if len(c.Examples) > 0 {
		s += " (" + strings.Join(c.Examples, "; ") + ")"
	}
	return s
}
