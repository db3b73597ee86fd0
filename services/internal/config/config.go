package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/action"
	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/internal/enum"
	"github.com/asyncwebrl/asyncwebrl/services/policy"
)

// EmbeddedBroker is the Brokers value that starts franz-go's in-process fake
// cluster (kfake): zero setup, for local trials and unit tests only.
const EmbeddedBroker = "embedded"

// Config is everything the binary's components are built from.
type Config struct {
	// Targets are the components to run: "all" or a list of names.
	Targets []string
	// Brokers is a seed broker list, or EmbeddedBroker.
	Brokers []string
	// TopicPrefix is prepended to every topic name so that several runs can
	// share one cluster ("" by default).
	TopicPrefix string
	// TopicPartitions and TopicReplication size the catalog's topics; a
	// replication of 0 (topics.AutoReplication) follows the cluster.
	TopicPartitions  int
	TopicReplication int
	// ApplyTopics makes the binary create or repair the catalog's topics at
	// start-up; ops teams that manage topics themselves turn it off.
	ApplyTopics bool
	// Kafka holds the client's security settings.
	Kafka KafkaSecurity
	// ClickHouse is where the recorder writes and the saved queries read.
	ClickHouse ClickHouse
	// AdminAddr serves /healthz, /metrics and /debug/pprof.
	AdminAddr string
	// WebenvAddr is where the webenv target listens.
	WebenvAddr string
	// WebenvURL is how actors reach webenv; empty means http://WebenvAddr.
	WebenvURL string
	// DashboardAddr is where the dashboard target serves its web page.
	DashboardAddr string
	// RecorderFrameSample: the recorder keeps the frames of every greedy
	// (evaluation) episode and of one in this many training episodes in
	// ClickHouse's frames table (0: greedy only; negative: none).
	RecorderFrameSample int
	// RunDir holds local state (checkpoints, frame store, reports).
	RunDir string
	// Suite is the task suite of every target and command that takes
	// tasks: builtin (the generated families), miniwob (the MiniWoB++
	// benchmark's pages, fetched by `make setup`) or all.
	Suite string
	// Seed seeds a run's randomness: the policy's initialisation (the
	// learner's and the actors' version 0), the learner's replay draws and
	// curriculum, the actors' action sampling and the web server's delays.
	// 0: the defaults (1 for the policy and the learner, the clock for the
	// actors and the server).
	Seed uint64
	// ActionSet is the action space a fresh policy chooses from (actor
	// and learner): bid (the element actions the built-in families need)
	// or bid+coord (and the mouse's own, by element and by point, which
	// MiniWoB++'s pages need). Empty: the suite's, bid for builtin and
	// bid+coord otherwise. Published weights carry their own.
	ActionSet string
	// Ablate lists the inputs a fresh policy does without (comma list of
	// vision and task-specific; default none), for the ablation runs of
	// the generalisation protocol. Published weights carry their own.
	Ablate string
	// Loop is the RL loop: async (actors never wait for the learner, the
	// learner never waits for a batch) or sync (the classic on-policy loop:
	// each batch of episodes, one per executor, acts with one version;
	// the actors wait while the learner trains on it and publishes the
	// next). With sync, the learner's -executors must be the actors' total.
	Loop string
	// PolicyBackend is what chooses the actors' actions: features (the
	// network over the featurized page, trained by the learner) or openai
	// (a model behind an OpenAI-compatible server, OpenAI; the learner
	// then schedules tasks and keeps the curriculum without training).
	PolicyBackend string
	OpenAI        OpenAI
	LM            LM
	// Actor and Webenv configure those targets (actor.go).
	Actor   Actor
	Webenv  Webenv
	Learner Learner
	Run     Run
	// InstanceID names this process in events and client ids.
	InstanceID string
	// LogLevel and LogFormat configure slog.
	LogLevel  slog.Level
	LogFormat string
	// Pyroscope is the profiling server to push to; empty disables pushing
	// (net/http/pprof is always served on AdminAddr).
	Pyroscope Pyroscope
	// StopTimeout bounds the whole graceful shutdown.
	StopTimeout time.Duration
}

// KafkaSecurity is SASL and TLS for every Kafka client.
type KafkaSecurity struct {
	// SASLMechanism is "", "plain", "scram-sha-256" or "scram-sha-512".
	SASLMechanism string
	SASLUser      string
	SASLPassword  Secret
	TLS           bool
	TLSCAFile     string
	TLSCertFile   string
	TLSKeyFile    string
	TLSServerName string
}

// ClickHouse is the analytics store's connection.
type ClickHouse struct {
	Addr     string
	Database string
	User     string
	Password Secret
}

// Pyroscope configures continuous profiling.
type Pyroscope struct {
	Address  string
	AppName  string
	User     string
	Password Secret
}

// Parse builds a Config from args (without the program name) and the
// environment. usage receives -help output. The error is one line and names
// the offending flag or variable.
func Parse(args []string, getenv func(string) string, usage io.Writer) (*Config, error) {
	fs := flag.NewFlagSet("asyncwebrl", flag.ContinueOnError)
	// Errors are reported once by the caller; only -help prints the flags.
	fs.SetOutput(io.Discard)
	var (
		c         Config
		targets   string
		brokers   string
		logLevel  string
		saslPass  string
		chPass    string
		pyroPass  string
		hostname  string
		envErrors []error
	)
	if h, err := os.Hostname(); err == nil {
		hostname = h
	}
	str := func(p *string, name, def, help string) {
		fs.StringVar(p, name, def, help+" (env "+envName(name)+")")
	}
	str(&targets, "target", "all", "components to run: all, or a comma list of "+strings.Join(KnownTargets, ", "))
	str(&brokers, "brokers", "127.0.0.1:19092", "Kafka seed brokers (comma list), or \"embedded\" for an in-process fake cluster")
	str(&c.TopicPrefix, "topic-prefix", "", "prefix for every topic name, so several runs can share a cluster")
	fs.IntVar(&c.TopicPartitions, "topic-partitions", 6, "partitions of each per-episode topic, the unit of consumer-group parallelism (env "+envName("topic-partitions")+")")
	fs.IntVar(&c.TopicReplication, "topic-replication", 0, "replication factor of every topic; 0 follows the cluster: 3 (min.insync.replicas 2) on three or more brokers, else one per broker (env "+envName("topic-replication")+")")
	fs.BoolVar(&c.ApplyTopics, "apply-topics", true, "create missing topics and repair drift at start-up (env "+envName("apply-topics")+")")
	str(&c.Kafka.SASLMechanism, "kafka-sasl-mechanism", "", "Kafka SASL mechanism: plain, scram-sha-256 or scram-sha-512 (empty: none)")
	str(&c.Kafka.SASLUser, "kafka-sasl-user", "", "Kafka SASL user")
	str(&saslPass, "kafka-sasl-password", "", "Kafka SASL password (prefer the environment variable)")
	fs.BoolVar(&c.Kafka.TLS, "kafka-tls", false, "connect to Kafka over TLS (env "+envName("kafka-tls")+")")
	str(&c.Kafka.TLSCAFile, "kafka-tls-ca", "", "PEM CA bundle for the Kafka TLS connection (default: system roots)")
	str(&c.Kafka.TLSCertFile, "kafka-tls-cert", "", "PEM client certificate for mutual TLS")
	str(&c.Kafka.TLSKeyFile, "kafka-tls-key", "", "PEM client key for mutual TLS")
	str(&c.Kafka.TLSServerName, "kafka-tls-server-name", "", "TLS server name override")
	str(&c.ClickHouse.Addr, "clickhouse-addr", "127.0.0.1:19000", "ClickHouse native protocol address")
	str(&c.ClickHouse.Database, "clickhouse-database", "asyncwebrl", "ClickHouse database")
	str(&c.ClickHouse.User, "clickhouse-user", "default", "ClickHouse user")
	str(&chPass, "clickhouse-password", "", "ClickHouse password (prefer the environment variable)")
	str(&c.AdminAddr, "admin-addr", "127.0.0.1:7070", "admin HTTP address: /healthz, /metrics, /debug/pprof")
	str(&c.WebenvAddr, "webenv-addr", "127.0.0.1:18080", "webenv task server address")
	str(&c.WebenvURL, "webenv-url", "", "URL actors use to reach webenv (default: http:// + -webenv-addr)")
	str(&c.DashboardAddr, "dashboard-addr", "127.0.0.1:7080", "dashboard web page address")
	fs.IntVar(&c.RecorderFrameSample, "recorder-frame-sample", 20, "the recorder stores the frames of every greedy (evaluation) episode and of 1 in this many training episodes in ClickHouse's frames table, for the dashboard's episode view; 0: greedy only, -1: none (env "+envName("recorder-frame-sample")+")")
	str(&c.RunDir, "run-dir", ".run", "local state directory: checkpoints, frame store, reports")
	str(&c.Suite, "suite", "builtin", "task suite: builtin (the generated families), miniwob (the MiniWoB++ benchmark, fetched by make setup) or all")
	fs.Uint64Var(&c.Seed, "seed", 0, "seed of a run's randomness: the policy's initialisation, the learner's replay and curriculum, the actors' sampling, the web server's delays; 0: the defaults (1, and the clock for actors and server) (env "+envName("seed")+")")
	str(&c.ActionSet, "action-set", "", "action space of a fresh policy: bid (noop, click, fill, select_option, scroll, press, go_back, send_msg_to_user) or bid+coord (and dblclick, hover, mouse_click, mouse_move, mouse_drag_and_drop, keyboard_type); empty: the suite's (bid for builtin, bid+coord for miniwob and all)")
	str(&c.Ablate, "ablate", "", "inputs a fresh policy does without, a comma list: vision (the frame zeroed, colour features off), task-specific (the features written for one task, derived values); empty: none")
	str(&c.Loop, "loop", "async", "RL loop: async, or sync for the classic on-policy loop (a batch of episodes per version; actors wait while the learner trains; the learner's -executors must be the actors' total)")
	str(&c.InstanceID, "instance-id", hostname, "name of this process in events and Kafka client ids")
	str(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	str(&c.LogFormat, "log-format", "text", "log format: text or json")
	str(&c.Pyroscope.Address, "pyroscope-server-address", "", "Pyroscope server to push profiles to (empty: off); also PYROSCOPE_SERVER_ADDRESS")
	str(&c.Pyroscope.AppName, "pyroscope-app-name", "asyncwebrl", "application name in Pyroscope")
	str(&c.Pyroscope.User, "pyroscope-user", "", "Pyroscope basic-auth user")
	str(&pyroPass, "pyroscope-password", "", "Pyroscope basic-auth password (prefer the environment variable)")
	str(&c.PolicyBackend, "policy-backend", "features", "what chooses the actions: features (the network over the featurized page, trained by the learner), lm (a language model in the actor, on ONNX Runtime: -lm-*; the learner trains its top blocks with GRPO and behaviour cloning) or openai (a model behind an OpenAI-compatible server: -openai-*; the learner schedules without training)")
	c.OpenAI.register(fs)
	c.LM.register(fs)
	c.Actor.register(fs)
	c.Webenv.register(fs)
	c.Learner.register(fs)
	c.Run.register(fs)
	fs.DurationVar(&c.StopTimeout, "stop-timeout", 30*time.Second, "deadline for graceful shutdown (env "+envName("stop-timeout")+")")

	// Environment first, then the command line over it.
	fs.VisitAll(func(f *flag.Flag) {
		v := getenv(envName(f.Name))
		if f.Name == "pyroscope-server-address" && v == "" {
			v = getenv("PYROSCOPE_SERVER_ADDRESS")
		}
		if f.Name == "openai-api-key" && v == "" {
			v = getenv("OPENAI_API_KEY")
		}
		if v == "" {
			return
		}
		if err := f.Value.Set(v); err != nil {
			envErrors = append(envErrors, fmt.Errorf("invalid %s=%q: %v", envName(f.Name), v, err))
		}
	})
	if len(envErrors) > 0 {
		return nil, envErrors[0]
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintf(usage, "Usage: asyncwebrl [command] [flags]\n  commands: %s (run without one to start targets)\n\nFlags:\n", strings.Join(Subcommands, ", "))
			fs.SetOutput(usage)
			fs.PrintDefaults()
			return nil, err
		}
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (flags go before it; subcommands: %s)", fs.Arg(0), strings.Join(Subcommands, ", "))
	}
	c.Kafka.SASLPassword = Secret(saslPass)
	c.ClickHouse.Password = Secret(chPass)
	c.Pyroscope.Password = Secret(pyroPass)
	var err error
	if c.Targets, err = ParseTargets(targets); err != nil {
		return nil, err
	}
	c.Brokers = SplitList(brokers)
	if err := c.parseLevel(logLevel); err != nil {
		return nil, err
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

func (c *Config) parseLevel(s string) error {
	if err := c.LogLevel.UnmarshalText([]byte(s)); err != nil {
		return fmt.Errorf("invalid -log-level %q: want debug, info, warn or error", s)
	}
	return nil
}

// oneOf checks that v is one of vals (ignoring case), in the one error form
// of the config's flags: `invalid -flag "v": want a, b or c`.
func oneOf(flag, v string, vals ...string) error {
	if _, err := enum.Parse(flag, v, vals...); err != nil {
		return fmt.Errorf("invalid %s %q: want %s", flag, v, enum.List(vals...))
	}
	return nil
}

// Validate checks the values that flag parsing cannot.
func (c *Config) Validate() error {
	if len(c.Brokers) == 0 {
		return errors.New("invalid -brokers: empty")
	}
	for _, b := range c.Brokers {
		if b == EmbeddedBroker {
			if len(c.Brokers) > 1 {
				return errors.New("invalid -brokers: \"embedded\" cannot be combined with other brokers")
			}
			continue
		}
		if err := checkHostPort(b); err != nil {
			return fmt.Errorf("invalid -brokers entry %q: %v", b, err)
		}
	}
	if c.Kafka.SASLMechanism != "" {
		if err := oneOf("-kafka-sasl-mechanism", c.Kafka.SASLMechanism, "plain", "scram-sha-256", "scram-sha-512"); err != nil {
			return err
		}
	}
	if c.Kafka.SASLMechanism != "" && (c.Kafka.SASLUser == "" || c.Kafka.SASLPassword == "") {
		return errors.New("invalid Kafka SASL config: -kafka-sasl-mechanism needs a user and a password")
	}
	if (c.Kafka.TLSCertFile == "") != (c.Kafka.TLSKeyFile == "") {
		return errors.New("invalid Kafka TLS config: -kafka-tls-cert and -kafka-tls-key go together")
	}
	if err := oneOf("-log-format", c.LogFormat, "text", "json"); err != nil {
		return err
	}
	for name, addr := range map[string]string{"-admin-addr": c.AdminAddr, "-clickhouse-addr": c.ClickHouse.Addr, "-webenv-addr": c.WebenvAddr, "-dashboard-addr": c.DashboardAddr} {
		if err := checkHostPort(addr); err != nil {
			return fmt.Errorf("invalid %s %q: %v", name, addr, err)
		}
	}
	if c.TopicPartitions < 1 || c.TopicPartitions > 1000 {
		return fmt.Errorf("invalid -topic-partitions %d: want 1..1000", c.TopicPartitions)
	}
	if c.TopicReplication < 0 || c.TopicReplication > 32 {
		return fmt.Errorf("invalid -topic-replication %d: want 0 (follow the cluster) or 1..32", c.TopicReplication)
	}
	if c.StopTimeout <= 0 {
		return fmt.Errorf("invalid -stop-timeout %s: must be positive", c.StopTimeout)
	}
	if err := c.validateBackend(); err != nil {
		return err
	}
	if err := c.Actor.validate(); err != nil {
		return err
	}
	if err := c.Learner.validate(); err != nil {
		return err
	}
	if c.Run.Duration < 0 {
		return fmt.Errorf("invalid -duration %s: want >= 0", c.Run.Duration)
	}
	suite, err := catalog.ParseSuite(c.Suite)
	if err != nil {
		return fmt.Errorf("invalid -suite: %w", err)
	}
	c.Suite = string(suite)
	set := action.SetBidCoord
	if suite == catalog.SuiteBuiltin {
		set = action.SetBid
	}
	if c.ActionSet != "" {
		if set, err = action.ParseSet(c.ActionSet); err != nil {
			return fmt.Errorf("invalid -action-set: %w", err)
		}
	}
	c.ActionSet = string(set)
	if _, err := policy.ParseAblations(c.Ablate); err != nil {
		return fmt.Errorf("invalid -ablate: %w", err)
	}
	if c.Webenv.Split != "" {
		if _, err := catalog.ParseSplit(c.Webenv.Split); err != nil {
			return fmt.Errorf("invalid -webenv-split: %w", err)
		}
	}
	switch c.Loop = strings.ToLower(strings.TrimSpace(c.Loop)); c.Loop {
	case "":
		c.Loop = "async"
	case "async":
	case "sync":
		if c.Actor.Mode != "async" && c.Actor.Mode != "sync" {
			return fmt.Errorf("invalid -actor-mode %q with -loop=sync: the on-policy loop runs the actors in sync mode", c.Actor.Mode)
		}
		c.Actor.Mode = "sync"
	default:
		return fmt.Errorf("invalid -loop %q: want async or sync", c.Loop)
	}
	if c.Webenv.MiniWoBDir == "" {
		c.Webenv.MiniWoBDir = filepath.Join(c.RunDir, "miniwob", "html")
	}
	if c.WebenvURL == "" {
		c.WebenvURL = "http://" + c.WebenvAddr
	}
	if c.InstanceID == "" {
		c.InstanceID = "asyncwebrl"
	}
	return nil
}

// Embedded reports whether the in-process fake cluster is asked for.
func (c *Config) Embedded() bool {
	return len(c.Brokers) == 1 && c.Brokers[0] == EmbeddedBroker
}

// LogValue lets a Config be logged whole; secrets stay redacted.
func (c *Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Any("targets", c.Targets),
		slog.Any("brokers", c.Brokers),
		slog.String("topic_prefix", c.TopicPrefix),
		slog.String("suite", c.Suite),
		slog.String("action_set", c.ActionSet),
		slog.String("ablate", c.Ablate),
		slog.String("loop", c.Loop),
		slog.String("kafka_sasl", c.Kafka.SASLMechanism),
		slog.String("kafka_sasl_user", c.Kafka.SASLUser),
		slog.Any("kafka_sasl_password", c.Kafka.SASLPassword),
		slog.Bool("kafka_tls", c.Kafka.TLS),
		slog.String("clickhouse", c.ClickHouse.Addr),
		slog.String("clickhouse_user", c.ClickHouse.User),
		slog.Any("clickhouse_password", c.ClickHouse.Password),
		slog.String("admin", c.AdminAddr),
		slog.String("pyroscope", c.Pyroscope.Address),
		slog.String("instance", c.InstanceID),
	)
}

func envName(flagName string) string {
	return "ASYNCWEBRL_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// SplitList splits a comma list, trimming blanks and dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// FreshArchitecture is the architecture of a policy this run starts from
// scratch (the learner's first version, the actors' random-init policy):
// the default one in the run's action set, without the ablated inputs.
func (c *Config) FreshArchitecture() policy.Architecture {
	a := policy.ArchitectureFor(action.Set(c.ActionSet))
	a.Ablations, _ = policy.ParseAblations(c.Ablate) // checked by Validate
	return a
}
