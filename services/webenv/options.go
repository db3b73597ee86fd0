package webenv

import (
	"log/slog"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
)

// Option configures a Server.
type Option func(*config)

type config struct {
	addr          string
	split         catalog.Split
	profile       Profile
	latencySeed   uint64
	thirdPartyDir string
	suite         catalog.Suite
	miniwobDir    string
	log           *slog.Logger
	// maxEpisodes: the most episodes kept in memory (default 10000, about
	// 10 KB each at most); the oldest are dropped first.
	maxEpisodes int
	// episodeTTL: how long an episode is kept after its creation
	// (default 30 minutes).
	episodeTTL time.Duration
}

func defaultConfig() config {
	return config{
		addr:        "127.0.0.1:0",
		split:       catalog.SplitTrain,
		profile:     Profile{Name: "none", Server: NoDelay{}},
		latencySeed: uint64(time.Now().UnixNano()),
		log:         slog.Default(),
		maxEpisodes: 10000,
		episodeTTL:  30 * time.Minute,
	}
}

// WithAddr sets the listen address (default "127.0.0.1:0", a free port; the
// binary uses 127.0.0.1:18080).
func WithAddr(addr string) Option { return func(c *config) { c.addr = addr } }

// WithSplit sets the sites served (default SplitTrain: test sites get a 404,
// so a training run never sees them).
func WithSplit(s catalog.Split) Option { return func(c *config) { c.split = s } }

// WithProfile sets the latency profile (default "none": no delay, no
// client-side loading). See ParseProfile.
func WithProfile(p Profile) Option { return func(c *config) { c.profile = p } }

// WithLatencySeed seeds the server's delay sampler (default: the start time,
// so runs differ; tests fix it).
func WithLatencySeed(seed uint64) Option { return func(c *config) { c.latencySeed = seed } }

// WithThirdPartyDir mounts a directory of MiniWoB-style pages under
// /thirdparty/ (default none). Each top-level *.html file is a family
// "thirdparty/<name>" with the single site "default".
func WithThirdPartyDir(dir string) Option { return func(c *config) { c.thirdPartyDir = dir } }

// WithSuite sets the suite served (default SuiteBuiltin). The built-in
// families are generated in process and always served; SuiteMiniWoB and
// SuiteAll mount the MiniWoB++ pages of WithMiniWoBDir under /miniwob/ and
// list them, SuiteMiniWoB alone.
func WithSuite(s catalog.Suite) Option { return func(c *config) { c.suite = s } }

// WithMiniWoBDir sets the MiniWoB++ html tree (the wheel's miniwob/html,
// unpacked by infra/setup.sh into .run/miniwob/html; default none). Only a
// suite with MiniWoB++ reads it.
func WithMiniWoBDir(dir string) Option { return func(c *config) { c.miniwobDir = dir } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }
