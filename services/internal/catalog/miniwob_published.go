package catalog

// PublishedSource is a published method whose per-task MiniWoB++ success
// rates this project read and sets beside its own.
type PublishedSource struct {
	// Name is the column's name; Citation where the figures come from
	// and where they were read.
	Name, Citation string
}

// MiniWoBPublishedSources are the columns of MiniWoBPublished, in order.
//
// All three come from one table this project read in full: AutoWebGLM's
// per-task MiniWoB++ results (Lai et al., KDD 2024, Appendix E, Table 8),
// which reports its own model beside HTML-T5-XL (Gur et al., ICLR 2024)
// and WebN-T5-XL (Gur et al., EMNLP 2023 Findings). The per-task tables of
// WGE (Liu et al., ICLR 2018, Figure 3 and Table 1), DOM-Q-NET (Jia et al.,
// ICLR 2019), CC-Net and its human baseline (Humphreys et al., ICML 2022,
// Appendix Table 3) were not readable from this machine (the stored copies
// of those papers stop before their results); analytics/miniwob-results.md
// says where they are. No figure here was measured by this project.
var MiniWoBPublishedSources = []PublishedSource{
	{Name: "AutoWebGLM", Citation: "Lai et al., AutoWebGLM, KDD 2024 (arXiv 2404.03648), Appendix E, Table 8"},
	{Name: "HTML-T5-XL", Citation: "Gur et al., A Real-World WebAgent with Planning, Long Context Understanding, and Program Synthesis, ICLR 2024; as reported in AutoWebGLM Table 8"},
	{Name: "WebN-T5-XL", Citation: "Gur et al., Understanding HTML with Large Language Models, EMNLP 2023 Findings; as reported in AutoWebGLM Table 8"},
}

// MiniWoBPublished holds, per MiniWoB++ task (without "miniwob/"), the
// published success rates in [0, 1] of MiniWoBPublishedSources, in order.
// Tasks a table does not report are absent.
var MiniWoBPublished = map[string][3]float64{
	"book-flight":                 {0.50, 0.99, 0.48},
	"choose-date":                 {1.00, 0.16, 0.08},
	"choose-date-easy":            {1.00, 1.00, 1.00},
	"choose-date-medium":          {1.00, 0.56, 0.07},
	"choose-list":                 {0.15, 0.22, 0.16},
	"click-button":                {1.00, 1.00, 1.00},
	"click-button-sequence":       {1.00, 1.00, 1.00},
	"click-checkboxes":            {1.00, 1.00, 0.22},
	"click-checkboxes-large":      {0.83, 0.90, 0.54},
	"click-checkboxes-soft":       {0.37, 0.99, 0.08},
	"click-checkboxes-transfer":   {1.00, 1.00, 0.63},
	"click-collapsible":           {1.00, 1.00, 0.26},
	"click-collapsible-2":         {0.76, 0.93, 0.27},
	"click-color":                 {0.74, 1.00, 0.34},
	"click-dialog":                {1.00, 1.00, 1.00},
	"click-dialog-2":              {1.00, 0.74, 1.00},
	"click-link":                  {1.00, 1.00, 0.99},
	"click-menu":                  {1.00, 0.37, 0.41},
	"click-option":                {1.00, 1.00, 0.87},
	"click-pie":                   {1.00, 0.96, 0.51},
	"click-scroll-list":           {0.57, 0.99, 0.98},
	"click-shades":                {1.00, 0.00, 0.00},
	"click-shape":                 {0.64, 0.79, 0.24},
	"click-tab":                   {1.00, 1.00, 0.57},
	"click-tab-2":                 {1.00, 0.94, 0.57},
	"click-tab-2-hard":            {1.00, 0.88, 0.12},
	"click-test":                  {1.00, 1.00, 1.00},
	"click-test-2":                {0.93, 1.00, 1.00},
	"click-widget":                {1.00, 1.00, 1.00},
	"count-shape":                 {0.65, 0.67, 0.64},
	"email-inbox":                 {1.00, 1.00, 0.38},
	"email-inbox-forward-nl":      {1.00, 1.00, 0.33},
	"email-inbox-forward-nl-turk": {1.00, 1.00, 0.23},
	"email-inbox-nl-turk":         {1.00, 0.99, 0.20},
	"enter-date":                  {1.00, 1.00, 0.89},
	"enter-password":              {1.00, 1.00, 0.72},
	"enter-text":                  {1.00, 1.00, 0.89},
	"enter-text-dynamic":          {1.00, 1.00, 1.00},
	"enter-time":                  {0.00, 1.00, 0.00},
	"focus-text":                  {1.00, 1.00, 1.00},
	"focus-text-2":                {1.00, 1.00, 1.00},
	"grid-coordinate":             {1.00, 1.00, 1.00},
	"guess-number":                {1.00, 0.13, 0.00},
	"identify-shape":              {1.00, 1.00, 0.88},
	"login-user":                  {1.00, 1.00, 0.82},
	"login-user-popup":            {0.63, 1.00, 0.72},
	"multi-layouts":               {1.00, 1.00, 0.83},
	"multi-orderings":             {1.00, 1.00, 0.88},
	"navigate-tree":               {1.00, 0.99, 0.91},
	"search-engine":               {1.00, 0.93, 0.34},
	"social-media":                {1.00, 0.99, 0.20},
	"social-media-all":            {0.90, 0.31, 0.21},
	"social-media-some":           {0.76, 0.89, 0.42},
	"tic-tac-toe":                 {0.74, 0.57, 0.48},
	"use-autocomplete":            {0.85, 0.97, 0.02},
	"use-spinner":                 {1.00, 0.07, 0.07},
}
