package env

import (
	"image"
	"time"

	"github.com/asyncwebrl/asyncwebrl/services/internal/catalog"
	"github.com/asyncwebrl/asyncwebrl/services/webenv"
)

// TaskRef names a task: a family, a site and a seed. Third-party pages use
// the family "thirdparty/<name>" and MiniWoB++ tasks "miniwob/<task>", both
// with the site "default" (or "").
type TaskRef struct {
	Family string `json:"family"`
	Site   string `json:"site"`
	Seed   int64  `json:"seed"`
}

// Box is an element's border box in viewport CSS pixels.
type Box struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Center is the box's centre.
func (b Box) Center() (x, y float64) {
	return float64(b.X) + float64(b.W)/2, float64(b.Y) + float64(b.H)/2
}

// Element is one interactive element of the page.
type Element struct {
	BID        string   `json:"bid"`
	Role       string   `json:"role"`
	Text       string   `json:"text"`
	Box        Box      `json:"box"`
	InViewport bool     `json:"inViewport"`
	Focused    bool     `json:"focused,omitempty"`
	Disabled   bool     `json:"disabled,omitempty"`
	Value      string   `json:"value,omitempty"`
	Checked    bool     `json:"checked,omitempty"`
	Options    []string `json:"options,omitempty"`
	// Selected are a listbox's selected options (a select of several
	// choices), their texts in order.
	Selected []string `json:"selected,omitempty"`
	// Hint is the element's tag, input type and class names as words
	// ("span like"): what an icon button or a widget is, beyond its text.
	Hint string `json:"hint,omitempty"`
	// Context is the visible text of the nearest ancestor that says more
	// than the element itself (the tweet around a reply button), cut to 100
	// characters.
	Context string `json:"context,omitempty"`
	// DOMID is the element's id attribute: some pages name an element only
	// there (MiniWoB++'s grid-coordinate: the point "(2,-1)").
	DOMID string `json:"domId,omitempty"`
}

// Observation is what the agent sees after Reset or Step.
type Observation struct {
	// Screenshot is a PNG of the viewport (nil when screenshots are off).
	Screenshot  []byte       `json:"-"`
	Viewport    catalog.Size `json:"viewport"`
	URL         string       `json:"url"`
	Instruction string       `json:"instruction"`
	Elements    []Element    `json:"elements"`
	// Text is the page's visible text as lines (agent.js pageText: the task
	// area's, deduplicated, at most 32 lines of 80 characters).
	Text []string `json:"text,omitempty"`
	// Stable is the settler's verdict on this frame; SettleWait its wait.
	Stable     bool          `json:"stable"`
	SettleWait time.Duration `json:"settle_wait"`
	// Score is the settler's stability score in [0, 1] (Settled.Score).
	Score float64 `json:"score"`

	// ScreenshotPixels is Screenshot decoded, when the settler decoded it
	// (Settled.FramePixels); nil otherwise. It is only read.
	ScreenshotPixels *image.RGBA `json:"-"`
}

// Info is the step's side information.
type Info struct {
	// Error is set when the action was malformed or impossible; the episode
	// goes on.
	Error string `json:"error,omitempty"`
	// Action is the action as executed, in string form.
	Action string `json:"action,omitempty"`
	// Raw and Reason are the page's WOB_RAW_REWARD_GLOBAL and
	// WOB_REWARD_REASON.
	Raw    float64 `json:"raw"`
	Reason string  `json:"reason,omitempty"`
	// Decayed is the page's WOB_REWARD_GLOBAL: Raw scaled by the time left,
	// max(0, 1 - elapsed/EPISODE_MAX_TIME), when the task asks for it (the
	// figure MiniWoB++ reports beside the raw one).
	Decayed float64 `json:"decayed"`
	// TimedOut: the page's own time limit ended the episode.
	TimedOut bool `json:"timed_out,omitempty"`
	// Success: the episode ended with every fact met (raw > 0 for pages
	// without a rubric).
	Success bool `json:"success"`
	// Partial is the rubric's partial credit; Facts the facts (webenv pages).
	// On a page without a rubric (MiniWoB++) it is instructionPotential,
	// and Potential is set.
	Partial float64 `json:"partial"`
	// Potential: Partial is a shaping potential, not credit: whatever ends
	// the episode takes it back (the env does on the page's own end; on a
	// truncation by the caller's step budget the caller must, see
	// TruncationShaping).
	Potential bool                `json:"potential,omitempty"`
	Facts     []webenv.FactResult `json:"facts,omitempty"`
	// Shaping is the breakdown of the shaping terms added to the reward.
	Shaping webenv.ShapingTerms `json:"shaping"`
	// Episode is the server's episode id (webenv pages).
	Episode string `json:"episode,omitempty"`
	// Messages are the messages sent to the user in this episode.
	Messages []string `json:"messages,omitempty"`
	// ActTime is the time the action took, without settling.
	ActTime time.Duration `json:"act_time"`
	// NetDelay is the delay the task server's latency profile drew for the
	// action's request (WithRequestPerAction; 0 without one).
	NetDelay time.Duration `json:"net_delay,omitempty"`
}

// StepResult is Step's result.
type StepResult struct {
	Obs    *Observation `json:"obs"`
	Reward float64      `json:"reward"`
	Done   bool         `json:"done"`
	Info   Info         `json:"info"`
}
