package topics

import (
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Topic names, without prefix.
const (
	Tasks       = "tasks"
	Obs         = "obs"
	Actions     = "actions"
	Rewards     = "rewards"
	Telemetry   = "telemetry"
	Transitions = "transitions"
	Episodes    = "episodes"
	Weights     = "weights"
	DLQ         = "dlq"
	// JoinerChangelog holds the joiner's per-episode join state so that a
	// new owner of a partition can rebuild it after a rebalance or crash.
	JoinerChangelog = "joiner-changelog"
	// LearnerLease is never written: the learners of a policy join a
	// consumer group on it, and the member assigned its one partition
	// leads (trains and publishes); the others stand by.
	LearnerLease = "learner-lease"
)

const (
	day = 24 * time.Hour
	mib = 1 << 20
)

// MaxMessageBytes is the largest message a topic of the catalog takes: a
// policy version on the weights topic. A producer of weights needs batches
// this large (franz-go's default is 1 MB).
const MaxMessageBytes = 64 * mib

// Cleanup policies.
const (
	Delete  = "delete"
	Compact = "compact"
)

// Spec is one topic's desired state.
type Spec struct {
	Name        string // without prefix
	Key         string // what the record key is, for the docs
	Doc         string // what the topic holds
	Partitions  int32
	Replication int16
	// Retention is retention.ms; zero means infinite (-1), which is what a
	// compacted topic and the system's history want.
	Retention       time.Duration
	Cleanup         string
	MaxMessageBytes int32
	// Message is the full protobuf name of the records' values, which
	// producers put in the record header eventspb.HeaderMessageType.
	Message string
}

// Configs returns the topic-level configs Apply sets and Check compares; a
// spec with AutoReplication needs ForBrokers first (Apply and Check do it).
func (s Spec) Configs() map[string]string {
	ret := "-1"
	if s.Retention > 0 {
		ret = strconv.FormatInt(s.Retention.Milliseconds(), 10)
	}
	return map[string]string{
		"cleanup.policy":    s.Cleanup,
		"retention.ms":      ret,
		"max.message.bytes": strconv.Itoa(int(s.MaxMessageBytes)),
		// With three replicas an acknowledged write is on two brokers, so
		// one broker may die with nothing lost and writes still accepted;
		// fewer replicas cannot ask for more than one.
		"min.insync.replicas": strconv.Itoa(max(1, min(2, int(s.Replication)-1))),
	}
}

// Catalog is the set of topics of one deployment.
type Catalog struct {
	Prefix string
	Specs  []Spec
}

// Option changes a catalog.
type Option func(*Catalog)

// WithPrefix prefixes every name (default: no prefix).
func WithPrefix(p string) Option { return func(c *Catalog) { c.Prefix = p } }

// AutoReplication, as a replication factor, follows the cluster: Apply and
// Check replace it by ReplicationFor the number of brokers the cluster has.
const AutoReplication int16 = 0

// ReplicationFor is the replication factor of a cluster of n brokers: three
// from three brokers on (with min.insync.replicas 2, one broker may die with
// nothing lost and writes still accepted), else one replica per broker.
func ReplicationFor(n int) int16 { return int16(max(1, min(3, n))) }

// WithReplication sets every topic's replication factor (default
// AutoReplication: 1 on a single local broker, 3 on the three-broker
// cluster of `make up KAFKA_NODES=3` and compose.yaml).
func WithReplication(rf int16) Option {
	return func(c *Catalog) {
		for i := range c.Specs {
			c.Specs[i].Replication = rf
		}
	}
}

// WithPartitions sets the partition count of the per-episode topics, the unit
// of parallelism of actors, joiners and recorders (default 6).
func WithPartitions(n int32) Option {
	return func(c *Catalog) {
		for i := range c.Specs {
			if c.Specs[i].Partitions > 1 {
				c.Specs[i].Partitions = n
			}
		}
	}
}

// New returns the catalog. The defaults size a single-node development
// cluster; retention keeps the raw history long enough to replay it.
func New(opts ...Option) *Catalog {
	c := &Catalog{Specs: []Spec{
		{Name: Tasks, Key: "task id", Doc: "task assignments: site, family, seed, tier, group", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib, Message: "asyncwebrl.v1.Task"},
		{Name: Obs, Key: "episode id", Doc: "observations: wire frame, url, elements, stability", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 4 * mib, Message: "asyncwebrl.v1.Observation"},
		{Name: Actions, Key: "episode id", Doc: "actions with log-prob, value, policy version, inference latency", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib, Message: "asyncwebrl.v1.Action"},
		{Name: Rewards, Key: "episode id", Doc: "rewards, done, success, rubric facts met", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib, Message: "asyncwebrl.v1.Reward"},
		{Name: Telemetry, Key: "actor id", Doc: "executor time split: observe, think, act, wait, idle", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib, Message: "asyncwebrl.v1.Telemetry"},
		{Name: Transitions, Key: "episode id", Doc: "the replay topic: (s, a, r, s', done, logp_old, version, group)", Partitions: 6, Retention: 7 * day, Cleanup: Delete, MaxMessageBytes: 8 * mib, Message: "asyncwebrl.v1.Transition"},
		{Name: Episodes, Key: "task id", Doc: "episode summaries: return, length, success, versions used", Partitions: 6, Retention: 30 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib, Message: "asyncwebrl.v1.Episode"},
		// Compacted: the latest version per policy name survives forever.
		{Name: Weights, Key: "policy name", Doc: "policy versions: ONNX model bytes and metadata", Partitions: 1, Cleanup: Compact, MaxMessageBytes: MaxMessageBytes, Message: "asyncwebrl.v1.Weights"},
		{Name: DLQ, Key: "source topic", Doc: "events that could not be decoded or joined, with the reason", Partitions: 1, Retention: 30 * day, Cleanup: Delete, MaxMessageBytes: 8 * mib, Message: "asyncwebrl.v1.DeadLetter"},
		// Compacted: the latest join state per episode; a tombstone when the
		// episode is finished.
		{Name: JoinerChangelog, Key: "episode id", Doc: "joiner state per open episode (changelog)", Partitions: 6, Cleanup: Compact, MaxMessageBytes: 16 * mib, Message: "asyncwebrl.v1.JoinEpisodeState"},
		// One partition, no records: its owner in a policy's lease group
		// is that policy's leading learner.
		{Name: LearnerLease, Key: "none (never written)", Doc: "learner leadership: the member of a policy's lease group holding partition 0 leads", Partitions: 1, Retention: 1 * day, Cleanup: Delete, MaxMessageBytes: 1 * mib},
	}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ForBrokers returns a copy of c in which every AutoReplication spec has
// the replication factor of a cluster of n brokers (ReplicationFor), and so
// its min.insync.replicas.
func (c *Catalog) ForBrokers(n int) *Catalog {
	out := &Catalog{Prefix: c.Prefix, Specs: slices.Clone(c.Specs)}
	for i := range out.Specs {
		if out.Specs[i].Replication == AutoReplication {
			out.Specs[i].Replication = ReplicationFor(n)
		}
	}
	return out
}

// Name returns the full (prefixed) name of a catalog topic.
func (c *Catalog) Name(topic string) string { return c.Prefix + topic }

// Spec returns the spec of a topic by its unprefixed name.
func (c *Catalog) Spec(topic string) (Spec, error) {
	i := slices.IndexFunc(c.Specs, func(s Spec) bool { return s.Name == topic })
	if i < 0 {
		return Spec{}, fmt.Errorf("unknown topic %q", topic)
	}
	return c.Specs[i], nil
}

// Inputs returns the full names of the actors' event topics the joiner and
// the recorder consume: obs, actions and rewards.
func (c *Catalog) Inputs() []string {
	return []string{c.Name(Obs), c.Name(Actions), c.Name(Rewards)}
}

// Names returns every full topic name in catalog order.
func (c *Catalog) Names() []string {
	out := make([]string, len(c.Specs))
	for i, s := range c.Specs {
		out[i] = c.Name(s.Name)
	}
	return out
}
