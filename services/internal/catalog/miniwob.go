package catalog

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// The MiniWoB++ suite: the benchmark's own pages (PyPI's miniwob wheel),
// which webenv serves as published. This file is their table: every task,
// its tier, its time limit and whether the env's action space can express
// it.

const (
	// MiniWoBPrefix starts the family name of a MiniWoB++ task:
	// "miniwob/click-test".
	MiniWoBPrefix = "miniwob/"
	// MiniWoBVersion is the version of PyPI's miniwob package whose pages
	// the table below describes (infra/setup.sh fetches that one).
	MiniWoBVersion = "1.1.0"
	// MiniWoBSite is the single site of a MiniWoB++ task: the benchmark has
	// one look per task; its train/test split is by seed, not by site.
	MiniWoBSite = "default"
	// MiniWoBDefaultMaxTime is core.EPISODE_MAX_TIME when a page does not
	// set its own.
	MiniWoBDefaultMaxTime = 10 * time.Second
)

// Why a task is out of reach of the action space: each reason names what
// is missing. These tasks are listed, never trained on, and left out of
// success figures. Since features v16 the policy points (mouse_click,
// mouse_move, mouse_drag_and_drop on a 64x64 grid of the frame) and hovers
// and double-clicks elements, so drags, hovers, text selections and
// points on an SVG or a canvas are no longer reasons.
const (
	// A drag is a straight press-move-release; a circle drawn by the
	// mouse is a curve.
	needsPath = "needs a curved mouse path (a drag is a straight line)"
	// The page animates without pause, so the visual settler never sees
	// two equal frames and every reset ran into the page's own time limit
	// (12 of 17 aborted episodes of a 4-minute smoke run of the suite).
	neverStable = "never visually stable (continuous animation): no step can wait for a settled page"
	// miniwob 1.1.0's hover-shape has its reward call commented out
	// ("TODO: Convert to the normal reward. // core.continuousReward"):
	// every episode ends at the time limit with raw reward −1, whatever
	// is done; a ceiling of the benchmark, not of the action space.
	neverRewards = "never rewards: its page's reward call is commented out in miniwob 1.1.0, so every episode times out at −1"
)

// MiniWoBTask is one task of the benchmark.
//
// Tier rule (the built-in families' rule, Tier's doc): the tier follows
// Steps, the number of actions of a minimal solution of a typical episode in
// the env's action space, as read from the task's genProblem in miniwob
// 1.1.0 (expected counts for random parts, e.g. click-checkboxes ticks half
// of 2–6 boxes then submits: 3): 1–3 easy, 4–6 medium, 7 or more hard. A
// task that must wait for the page (button-delay, stock-market) counts its
// waits as noop steps.
type MiniWoBTask struct {
	Name string `json:"name"`
	// Steps is the length of a minimal solution of a typical episode.
	Steps int `json:"steps"`
	// MaxTime is the page's core.EPISODE_MAX_TIME.
	MaxTime time.Duration `json:"max_time"`
	// Unsupported says what the action space lacks ("" when it can
	// express the task).
	Unsupported string `json:"unsupported,omitempty"`
	// WGE marks the subset of Liu et al. (ICLR 2018, "Reinforcement
	// Learning on Web Interfaces using Workflow-Guided Exploration"),
	// listed as "Tasks used in the paper" on the MiniWoB++ project page:
	// the original MiniWoB tasks that need only clicking and typing text
	// from the prompt.
	WGE  bool   `json:"wge,omitempty"`
	Desc string `json:"desc"`
}

// Tier is the task's tier by the rule above.
func (t MiniWoBTask) Tier() Tier { return tierOfSteps(t.Steps) }

// Supported reports whether the action space can express the task.
func (t MiniWoBTask) Supported() bool { return t.Unsupported == "" }

// Family is the task's family name, "miniwob/<name>".
func (t MiniWoBTask) Family() string { return MiniWoBPrefix + t.Name }

func tierOfSteps(n int) Tier {
	switch {
	case n <= 3:
		return Easy
	case n <= 6:
		return Medium
	}
	return Hard
}

// mwt is a page's core.EPISODE_MAX_TIME in milliseconds (0: the default).
func mwt(n int) time.Duration {
	if n == 0 {
		return MiniWoBDefaultMaxTime
	}
	return time.Duration(n) * time.Millisecond
}

// miniwobTasks is the table: every page of miniwob/html/miniwob/ in 1.1.0,
// by name. Steps count clicks, fills, select_options, key presses, scrolls
// and waits; "type N" below means one fill.
var miniwobTasks = []MiniWoBTask{
	{"ascending-numbers", 5, mwt(10000), "", false, "click the 5 numbers in ascending order"},
	{"bisect-angle", 1, mwt(0), "", false, "click the point whose line bisects an angle"},
	{"book-flight", 8, mwt(30000), "", false, "search flights (autocomplete, date picker) and book the asked one"},
	{"book-flight-nodelay", 8, mwt(30000), "", false, "book-flight without the loading delay"},
	{"button-delay", 3, mwt(0), "", false, "click button one, wait the asked seconds, click button two"},
	{"buy-ticket", 2, mwt(10000), "", false, "buy the ticket matching a criterion (cheapest, shortest, ...)"},
	{"chase-circle", 1, mwt(0), neverStable, false, "keep the mouse on a moving circle"},
	{"choose-date", 5, mwt(20000), "", false, "pick a date with a date picker, paging months"},
	{"choose-date-easy", 3, mwt(20000), "", false, "choose-date within the current month"},
	{"choose-date-medium", 4, mwt(20000), "", false, "choose-date a month or two away"},
	{"choose-date-nodelay", 5, mwt(20000), "", false, "choose-date without the animation delay"},
	{"choose-list", 2, mwt(0), "", true, "select an item of a drop-down list and submit"},
	{"circle-center", 1, mwt(0), "", false, "click the centre of a circle"},
	{"click-button", 1, mwt(0), "", true, "click the button with the asked label"},
	{"click-button-sequence", 2, mwt(0), "", true, "click button one, then button two"},
	{"click-checkboxes", 3, mwt(0), "", true, "tick the named checkboxes and submit"},
	{"click-checkboxes-large", 6, mwt(20000), "", false, "click-checkboxes with 5–12 boxes"},
	{"click-checkboxes-soft", 3, mwt(0), "", false, "tick the boxes whose words are synonyms of the asked ones"},
	{"click-checkboxes-transfer", 3, mwt(0), "", false, "click-checkboxes with other instruction wordings"},
	{"click-collapsible", 2, mwt(0), "", false, "expand a section and click its submit"},
	{"click-collapsible-2", 3, mwt(0), "", false, "expand sections to find and click a link"},
	{"click-collapsible-2-nodelay", 3, mwt(0), "", false, "click-collapsible-2 without the animation"},
	{"click-collapsible-nodelay", 2, mwt(0), "", false, "click-collapsible without the animation"},
	{"click-color", 1, mwt(0), "", true, "click the box of the asked colour"},
	{"click-dialog", 1, mwt(0), "", true, "close a dialog with its x"},
	{"click-dialog-2", 1, mwt(0), "", true, "click the asked button of a dialog"},
	{"click-link", 1, mwt(0), "", true, "click the link with the asked text"},
	{"click-menu", 3, mwt(0), "", false, "open nested menu items to select the asked one"},
	{"click-menu-2", 2, mwt(0), "", false, "open a menu and click the asked item or icon"},
	{"click-option", 2, mwt(0), "", true, "pick the asked radio button and submit"},
	{"click-pie", 2, mwt(0), "", false, "open a pie menu and click the asked slice (SVG elements)"},
	{"click-pie-nodelay", 2, mwt(0), "", false, "click-pie without the animation"},
	{"click-scroll-list", 2, mwt(15000), "", false, "select items of a scrolling multi-select list (one select_option) and submit"},
	{"click-shades", 5, mwt(15000), "", true, "click every shade of the asked colour and submit"},
	{"click-shape", 1, mwt(0), "", true, "click the asked shape (SVG elements)"},
	{"click-tab", 1, mwt(0), "", true, "click the asked tab"},
	{"click-tab-2", 2, mwt(0), "", true, "open tabs to find and click a link"},
	{"click-tab-2-easy", 2, mwt(0), "", false, "click-tab-2 with fewer tabs"},
	{"click-tab-2-hard", 3, mwt(20000), "", false, "click-tab-2 with more tabs and distractors"},
	{"click-tab-2-medium", 2, mwt(0), "", false, "click-tab-2 with a few tabs"},
	{"click-test", 1, mwt(0), "", true, "click the button"},
	{"click-test-2", 1, mwt(0), "", true, "click the asked one of two buttons"},
	{"click-test-transfer", 1, mwt(0), "", false, "click-test-2 with other labels"},
	{"click-widget", 1, mwt(0), "", true, "click the widget of the asked kind"},
	{"copy-paste", 2, mwt(0), "", false, "copy a textarea's text into an input and submit (text from the page)"},
	{"copy-paste-2", 2, mwt(0), "", false, "copy the asked textarea's text into an input and submit (text from the page)"},
	{"count-shape", 1, mwt(0), "", true, "count shapes and click the answer"},
	{"count-sides", 1, mwt(0), "", false, "count a drawn shape's sides and click the answer"},
	{"daily-calendar", 4, mwt(20000), "", false, "drag out an event on a calendar and name it"},
	{"drag-box", 1, mwt(0), "", false, "drag the small box into the large one"},
	{"drag-circle", 1, mwt(0), "", false, "drag a circle in the asked direction"},
	{"drag-cube", 2, mwt(15000), "", false, "rotate a cube by dragging to show a face"},
	{"drag-items", 1, mwt(0), "", false, "drag a list item to a position"},
	{"drag-items-grid", 1, mwt(0), "", false, "drag a grid item to a position"},
	{"drag-shapes", 3, mwt(15000), "", false, "drag shapes into a box"},
	{"drag-shapes-2", 3, mwt(30000), "", false, "drag the asked shapes between boxes"},
	{"drag-single-shape", 1, mwt(0), "", false, "drag a shape in a direction"},
	{"drag-sort-numbers", 4, mwt(0), "", false, "sort numbers by dragging"},
	{"draw-circle", 1, mwt(10000), needsPath, false, "draw a circle around a point"},
	{"draw-line", 1, mwt(10000), "", false, "draw a line through a point"},
	{"email-inbox", 5, mwt(30000), "", true, "open an email and delete, star, reply or forward it"},
	{"email-inbox-delete", 2, mwt(30000), "", false, "open and delete an email"},
	{"email-inbox-forward", 5, mwt(30000), "", false, "forward an email to someone"},
	{"email-inbox-forward-nl", 5, mwt(30000), "", false, "email-inbox-forward with natural-language instructions"},
	{"email-inbox-forward-nl-turk", 5, mwt(30000), "", false, "email-inbox-forward with crowd-written instructions"},
	{"email-inbox-important", 2, mwt(30000), "", false, "mark an email important"},
	{"email-inbox-nl-turk", 5, mwt(30000), "", false, "email-inbox with crowd-written instructions"},
	{"email-inbox-noscroll", 5, mwt(30000), "", false, "email-inbox without scrolling"},
	{"email-inbox-reply", 4, mwt(30000), "", false, "reply to an email with the asked text"},
	{"email-inbox-star-reply", 5, mwt(30000), "", false, "star an email and reply to it"},
	{"enter-date", 2, mwt(20000), "", true, "type a date into a date input and submit"},
	{"enter-password", 3, mwt(15000), "", true, "type the password into both fields and submit"},
	{"enter-text", 2, mwt(0), "", true, "type the asked text and submit"},
	{"enter-text-2", 2, mwt(0), "", false, "type the asked text transformed (case) and submit"},
	{"enter-text-dynamic", 2, mwt(0), "", true, "type the asked random string and submit"},
	{"enter-time", 2, mwt(20000), "", true, "type a time into a time input and submit"},
	{"find-greatest", 4, mwt(10000), "", false, "turn cards over to find and pick the greatest"},
	{"find-midpoint", 1, mwt(0), "", false, "click the midpoint between two points"},
	{"find-word", 2, mwt(0), "", false, "type the nth word of a paragraph and submit (text from the page)"},
	{"focus-text", 1, mwt(0), "", true, "focus the text field"},
	{"focus-text-2", 1, mwt(0), "", true, "focus the asked one of several text fields"},
	{"form-sequence", 5, mwt(0), "", false, "set a slider (keys), tick a box, submit"},
	{"form-sequence-2", 3, mwt(10000), "", false, "pick a radio, type a number, submit"},
	{"form-sequence-3", 2, mwt(10000), "", false, "choose from a drop-down and click a button"},
	{"generate-number", 3, mwt(15000), "", false, "generate numbers until one meets a condition, submit"},
	{"grid-coordinate", 1, mwt(0), "", true, "click the grid point at the asked coordinates (SVG elements)"},
	{"guess-number", 6, mwt(15000), "", true, "guess a number from higher/lower hints"},
	{"highlight-text", 2, mwt(0), "", false, "select a paragraph's text and submit"},
	{"highlight-text-2", 2, mwt(0), "", false, "select the asked paragraph's text and submit"},
	{"hot-cold", 5, mwt(15000), "", false, "find a hidden spot from hot/cold hints on mouse moves"},
	{"hover-shape", 1, mwt(0), neverRewards, false, "hover over a shape until it changes"},
	{"identify-shape", 1, mwt(0), "", true, "click the button naming the shown shape"},
	{"login-user", 3, mwt(0), "", true, "type a username and a password and log in"},
	{"login-user-popup", 4, mwt(15000), "", false, "login-user with a pop-up to dismiss"},
	{"moving-items", 1, mwt(0), neverStable, false, "click a moving shape (SVG elements)"},
	{"multi-layouts", 4, mwt(20000), "", false, "fill a form whose layout varies"},
	{"multi-orderings", 4, mwt(20000), "", false, "fill a form whose field order varies"},
	{"navigate-tree", 3, mwt(0), "", true, "open folders of a file tree to click a file"},
	{"number-checkboxes", 8, mwt(30000), "", false, "draw a digit by ticking a grid of boxes"},
	{"odd-or-even", 4, mwt(15000), "", false, "mark 3 numbers odd or even and submit"},
	{"order-food", 5, mwt(20000), "", false, "order the asked menu items"},
	{"phone-book", 4, mwt(15000), "", false, "page a phone book to find a contact's detail"},
	{"read-table", 2, mwt(0), "", false, "read a table cell and type it (text from the page)"},
	{"read-table-2", 3, mwt(20000), "", false, "read two table cells and type them (text from the page)"},
	{"resize-textarea", 1, mwt(0), "", false, "resize a textarea by its handle"},
	{"right-angle", 1, mwt(0), "", false, "click the point making a right angle"},
	{"scroll-text", 3, mwt(0), "", false, "scroll a textarea to find the last word and type it (text from the page)"},
	{"scroll-text-2", 2, mwt(0), "", false, "scroll a textarea in the asked direction"},
	{"search-engine", 4, mwt(20000), "", true, "search and page the results to click the nth"},
	{"sign-agreement", 3, mwt(10000), "", false, "scroll to the end of an agreement and sign it"},
	{"simon-says", 6, mwt(15000), "", false, "watch 3–5 buttons light up (a wait), press them in that order"},
	{"simple-algebra", 2, mwt(0), "", false, "solve for x, type it and submit"},
	{"simple-arithmetic", 2, mwt(0), "", false, "compute a sum, type it and submit"},
	{"social-media", 2, mwt(15000), "", true, "click an action on a user's post"},
	{"social-media-all", 4, mwt(20000), "", false, "click an action on all of a user's posts and submit"},
	{"social-media-some", 4, mwt(20000), "", false, "click an action on n of a user's posts and submit"},
	{"stock-market", 3, mwt(0), neverStable, false, "wait for a price to drop below a bound and buy"},
	{"terminal", 9, mwt(20000), "", false, "type shell commands to find and delete a file (help, ls, rm: each a word the page shows)"},
	{"text-editor", 4, mwt(15000), "", false, "select text in an editor and style it"},
	{"text-transform", 2, mwt(15000), "", false, "type a word drawn with distorted letters and submit"},
	{"tic-tac-toe", 3, mwt(0), "", true, "win a game of tic-tac-toe"},
	{"unicode-test", 1, mwt(0), "", false, "click the button with the asked symbol"},
	{"use-autocomplete", 3, mwt(0), "", false, "type a prefix, pick the matching suggestion, submit"},
	{"use-autocomplete-nodelay", 3, mwt(0), "", false, "use-autocomplete without the delay"},
	{"use-colorwheel", 2, mwt(7000), "", false, "pick a colour on a colour wheel"},
	{"use-colorwheel-2", 4, mwt(7000), "", false, "pick the swatch's colour with a colour picker's pad and slider"},
	{"use-slider", 4, mwt(0), "", false, "set a slider (keys on its handle) and submit"},
	{"use-slider-2", 8, mwt(20000), "", false, "set three sliders to a combination and submit"},
	{"use-spinner", 2, mwt(0), "", true, "set a spinner to the asked number and submit"},
	{"visual-addition", 2, mwt(15000), "", false, "count blocks of two groups, type the sum, submit"},
}

// MiniWoBTasks returns the table, sorted by name.
func MiniWoBTasks() []MiniWoBTask { return slices.Clone(miniwobTasks) }

// MiniWoBTaskByName finds a task by its name or family name.
func MiniWoBTaskByName(name string) (MiniWoBTask, bool) {
	name = strings.TrimPrefix(name, MiniWoBPrefix)
	i, ok := slices.BinarySearchFunc(miniwobTasks, name, func(t MiniWoBTask, n string) int { return cmp.Compare(t.Name, n) })
	if !ok {
		return MiniWoBTask{}, false
	}
	return miniwobTasks[i], true
}

// MiniWoBFamilies lists the MiniWoB++ tasks as families, easy first, each
// with its tier and whether the action space can express it.
func MiniWoBFamilies() []FamilyInfo {
	out := make([]FamilyInfo, 0, len(miniwobTasks))
	for _, t := range miniwobTasks {
		out = append(out, FamilyInfo{
			Name: t.Family(), Tier: t.Tier(), Desc: t.Desc, Viewport: ViewportSmall, MaxTimeSec: t.MaxTime.Seconds(),
			Sites: []SiteInfo{{Name: MiniWoBSite, Split: SplitAll}}, Suite: SuiteMiniWoB,
			Steps: t.Steps, Unsupported: t.Unsupported, WGE: t.WGE,
		})
	}
	slices.SortStableFunc(out, func(a, b FamilyInfo) int { return int(a.Tier) - int(b.Tier) })
	return out
}

// SuiteFamilies lists the families of a suite: the built-in ones first,
// then the MiniWoB++ tasks.
func SuiteFamilies(s Suite) []FamilyInfo {
	var out []FamilyInfo
	if s.HasBuiltin() {
		out = append(out, Families()...)
	}
	if s.HasMiniWoB() {
		out = append(out, MiniWoBFamilies()...)
	}
	return out
}

// PrintSuite writes the families of a suite in format "text" or "json".
func PrintSuite(w io.Writer, format string, s Suite) error {
	if s == SuiteMiniWoB {
		return printMiniWoB(w, format, MiniWoBFamilies())
	}
	return PrintFamilies(w, format, SuiteFamilies(s))
}

// printMiniWoB prints the MiniWoB++ table: a task's site and split say
// nothing (one site, split by seed), its support and reason do.
func printMiniWoB(w io.Writer, format string, fams []FamilyInfo) error {
	if format == "json" {
		return PrintFamilies(w, format, fams)
	}
	if format != "" && format != "text" {
		return fmt.Errorf("unknown format %q: want text or json", format)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tTIER\tSTEPS\tMAX TIME\tWGE\tSUPPORTED\tDESCRIPTION")
	supported := 0
	for _, f := range fams {
		sup := "yes"
		if f.Unsupported != "" {
			sup = "no: " + f.Unsupported
		} else {
			supported++
		}
		wge := ""
		if f.WGE {
			wge = "wge"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%gs\t%s\t%s\t%s\n", f.Name, f.Tier, f.Steps, f.MaxTimeSec, wge, sup, f.Desc)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("unable to write families: %w", err)
	}
	_, err := fmt.Fprintf(w, "%d tasks of miniwob %s, %d supported by the action space; tier by the steps of a minimal solution (1-3 easy, 4-6 medium, 7+ hard)\n",
		len(fams), MiniWoBVersion, supported)
	if err != nil {
		return fmt.Errorf("unable to write families: %w", err)
	}
	return nil
}

// miniwobGraded are the tasks whose page pays a graded score for a
// successful answer, by how close a point is (1 − distance / radius, an
// angle's error) or how close a colour is (use-colorwheel-2: 1 − the mean
// channel difference): raw reward 1 needs a point exact to the pixel, which
// no point on the policy's grid is, nor a person's click. (use-colorwheel-2
// pays 1 for its hex code typed, but no text on its page names its colour:
// the policy picks it with the picker's pad and slider.) Their measure is
// the score (mean raw reward), not strict success.
var miniwobGraded = map[string]bool{"circle-center": true, "find-midpoint": true, "bisect-angle": true, "right-angle": true, "use-colorwheel-2": true}

// MiniWoBGraded reports whether task ("circle-center" or
// "miniwob/circle-center") pays a graded score (miniwobGraded).
func MiniWoBGraded(task string) bool { return miniwobGraded[strings.TrimPrefix(task, MiniWoBPrefix)] }
