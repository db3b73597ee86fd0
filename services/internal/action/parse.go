package action

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// MaxLen is the longest action string Parse reads, in bytes.
const MaxLen = 16 << 10

// MaxNoopWait is the longest noop wait in milliseconds.
const MaxNoopWait = 60000

// Limits of the parser, so that no input can make it slow or large.
const (
	maxActionLen = MaxLen
	maxTextLen   = 10000
	maxBIDLen    = 64
	maxScroll    = 100000
	maxNoopWait  = MaxNoopWait
	maxCoord     = 100000
)

// Parse parses one action in BrowserGym's string form, e.g.
// click("12"), fill("7", "hello"), select_option("3", ["a", "b"]),
// scroll(0, 200), press("Enter"), press("7", "Control+a"), goto("/x"),
// go_back(), noop(500), send_msg_to_user("done"), mouse_click(40, 62.5),
// dblclick("4"), hover("4"), drag_and_drop("4", "9"),
// mouse_drag_and_drop(10, 20, 90, 20). Strings take double or
// single quotes with backslash escapes; keyword arguments use BrowserGym's
// parameter names (bid, value, options, delta_x, delta_y, key_comb, url,
// wait_ms, text, button, x, y, from_bid, to_bid, from_x, from_y, to_x,
// to_y). A key combination is checked for its form only
// (the env knows the keys: env.ParseAction checks them too).
func Parse(s string) (Action, error) {
	if len(s) > maxActionLen {
		return Action{}, fmt.Errorf("action too long: %d bytes > %d", len(s), maxActionLen)
	}
	p := &parser{s: s}
	a, err := p.action()
	if err != nil {
		return Action{}, fmt.Errorf("unable to parse action %q: %w", Clip(s, 80), err)
	}
	return a, nil
}

// Clip shortens s to its first n bytes and an ellipsis, for error messages.
func Clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

type valKind int

const (
	kString valKind = iota + 1
	kNumber
	kList
)

type value struct {
	kind valKind
	s    string
	n    float64
	list []string
}

type arg struct {
	name string // "" for a positional argument
	v    value
}

type parser struct {
	s string
	i int
}

func (p *parser) ws() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

func (p *parser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func isIdent(c byte, first bool) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (!first && c >= '0' && c <= '9')
}

func (p *parser) ident() string {
	start := p.i
	for p.i < len(p.s) && isIdent(p.s[p.i], p.i == start) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *parser) action() (Action, error) {
	p.ws()
	name := p.ident()
	if name == "" {
		return Action{}, errors.New("want an action name, e.g. click")
	}
	p.ws()
	if p.peek() != '(' {
		return Action{}, fmt.Errorf("want ( after %s", name)
	}
	p.i++
	args, err := p.args()
	if err != nil {
		return Action{}, err
	}
	p.ws()
	if p.i != len(p.s) {
		return Action{}, fmt.Errorf("unexpected text after the action at offset %d", p.i)
	}
	return bind(name, args)
}

func (p *parser) args() ([]arg, error) {
	var out []arg
	for {
		p.ws()
		if p.peek() == ')' {
			p.i++
			return out, nil
		}
		if len(out) > 0 {
			if p.peek() != ',' {
				return nil, fmt.Errorf("want , or ) at offset %d", p.i)
			}
			p.i++
			p.ws()
			if p.peek() == ')' { // trailing comma
				p.i++
				return out, nil
			}
		}
		if len(out) >= 8 {
			return nil, errors.New("too many arguments")
		}
		var a arg
		save := p.i
		if id := p.ident(); id != "" {
			p.ws()
			if p.peek() == '=' {
				p.i++
				a.name = id
			} else {
				p.i = save
			}
		}
		p.ws()
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a.v = v
		out = append(out, a)
	}
}

func (p *parser) value() (value, error) {
	switch c := p.peek(); {
	case c == '"' || c == '\'':
		s, err := p.str()
		return value{kind: kString, s: s}, err
	case c == '[':
		p.i++
		var list []string
		for {
			p.ws()
			if p.peek() == ']' {
				p.i++
				return value{kind: kList, list: list}, nil
			}
			if len(list) > 0 {
				if p.peek() != ',' {
					return value{}, fmt.Errorf("want , or ] at offset %d", p.i)
				}
				p.i++
				p.ws()
				if p.peek() == ']' {
					p.i++
					return value{kind: kList, list: list}, nil
				}
			}
			if len(list) >= 64 {
				return value{}, errors.New("list too long")
			}
			if q := p.peek(); q != '"' && q != '\'' {
				return value{}, fmt.Errorf("want a string in the list at offset %d", p.i)
			}
			s, err := p.str()
			if err != nil {
				return value{}, err
			}
			list = append(list, s)
		}
	case c == '-' || c == '+' || c == '.' || (c >= '0' && c <= '9'):
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE_", p.s[p.i]) >= 0 {
			p.i++
		}
		lit := p.s[start:p.i]
		if strings.Contains(lit, "_") {
			return value{}, fmt.Errorf("bad number %q", lit)
		}
		n, err := strconv.ParseFloat(lit, 64)
		if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
			return value{}, fmt.Errorf("bad number %q", lit)
		}
		return value{kind: kNumber, n: n}, nil
	case c == 0:
		return value{}, errors.New("unexpected end of the action")
	default:
		return value{}, fmt.Errorf("want a string, a number or a list at offset %d", p.i)
	}
}

// str reads a quoted string: Go's escapes, plus \' in either quote style
// (Python's).
func (p *parser) str() (string, error) {
	q := p.s[p.i]
	var b strings.Builder
	b.WriteByte('"')
	j := p.i + 1
	for ; j < len(p.s); j++ {
		c := p.s[j]
		switch {
		case c == '\\':
			if j+1 >= len(p.s) {
				return "", errors.New("unterminated string")
			}
			n := p.s[j+1]
			if n == '\'' {
				b.WriteByte('\'')
			} else {
				b.WriteByte('\\')
				b.WriteByte(n)
			}
			j++
			continue
		case c == q:
			b.WriteByte('"')
			s, err := strconv.Unquote(b.String())
			if err != nil {
				return "", fmt.Errorf("bad string at offset %d: %w", p.i, err)
			}
			p.i = j + 1
			return s, nil
		case c == '"': // a double quote inside a single-quoted string
			b.WriteString(`\"`)
			continue
		}
		b.WriteByte(c)
	}
	return "", errors.New("unterminated string")
}

// aliases map other names of a keyword argument to BrowserGym's.
var aliases = map[string]string{"key": "key_comb", "text_value": "value", "option": "options", "dx": "delta_x", "dy": "delta_y"}

func bind(name string, args []arg) (Action, error) {
	sig, ok := ByName(Name(name))
	if !ok {
		return Action{}, fmt.Errorf("unknown action %q (want %s)", Clip(name, 40), names())
	}
	params := sig.Params
	// press("Enter") is press(key_comb="Enter"): one positional argument is
	// the key, as in the env's documented form.
	if name == "press" && len(args) == 1 && args[0].name == "" {
		params = []string{"key_comb"}
	}
	got := map[string]value{}
	for i, a := range args {
		key := a.name
		if key == "" {
			if i >= len(params) {
				return Action{}, fmt.Errorf("%s takes at most %d arguments", name, len(params))
			}
			key = params[i]
		} else if al, ok := aliases[key]; ok {
			key = al
		}
		if !slices.Contains(sig.Params, key) {
			return Action{}, fmt.Errorf("%s has no argument %q", name, Clip(key, 40))
		}
		if _, dup := got[key]; dup {
			return Action{}, fmt.Errorf("%s: argument %s given twice", name, key)
		}
		got[key] = a.v
	}
	req := sig.Params[:sig.Required]
	if name == "press" {
		req = []string{"key_comb"}
	}
	for _, r := range req {
		if _, ok := got[r]; !ok {
			return Action{}, fmt.Errorf("%s needs the argument %s", name, r)
		}
	}
	a := Action{Type: sig.Name}
	var err error
	str := func(key string, limit int) string {
		v, ok := got[key]
		if !ok || err != nil {
			return ""
		}
		if v.kind != kString {
			err = fmt.Errorf("%s: %s must be a string", name, key)
			return ""
		}
		if len(v.s) > limit {
			err = fmt.Errorf("%s: %s too long (%d > %d bytes)", name, key, len(v.s), limit)
			return ""
		}
		return v.s
	}
	num := func(key string, lo, hi float64) float64 {
		v, ok := got[key]
		if !ok || err != nil {
			return 0
		}
		if v.kind != kNumber || v.n < lo || v.n > hi {
			err = fmt.Errorf("%s: %s must be a number in [%g, %g]", name, key, lo, hi)
			return 0
		}
		return v.n
	}
	bidOf := func(key string) string {
		b := str(key, maxBIDLen)
		if err == nil && !validBID(b) {
			err = fmt.Errorf("%s: bad %s %q (want letters, digits, - _ . :)", name, key, Clip(b, 20))
		}
		return b
	}
	bid := func() string { return bidOf("bid") }
	left := func() {
		if btn := str("button", 16); err == nil && btn != "" && btn != "left" {
			err = fmt.Errorf("%s: only the left button is supported, not %q", name, btn)
		}
	}
	switch a.Type {
	case Click:
		a.BID = bid()
		left()
	case DblClick:
		a.BID = bid()
		left()
	case Hover:
		a.BID = bid()
	case DragAndDrop:
		a.BID, a.ToBID = bidOf("from_bid"), bidOf("to_bid")
	case MouseClick:
		a.X, a.Y = num("x", 0, maxCoord), num("y", 0, maxCoord)
		left()
	case MouseMove:
		a.X, a.Y = num("x", 0, maxCoord), num("y", 0, maxCoord)
	case MouseDragAndDrop:
		a.X, a.Y = num("from_x", 0, maxCoord), num("from_y", 0, maxCoord)
		a.ToX, a.ToY = num("to_x", 0, maxCoord), num("to_y", 0, maxCoord)
	case Fill:
		a.BID = bid()
		a.Text = str("value", maxTextLen)
	case SelectOption:
		a.BID = bid()
		switch v := got["options"]; v.kind {
		case kString:
			a.Options = []string{v.s}
		case kList:
			if len(v.list) == 0 {
				err = errors.New("select_option: no option given")
			}
			a.Options = v.list
		default:
			err = errors.New("select_option: options must be a string or a list of strings")
		}
		for _, o := range a.Options {
			if len(o) > maxTextLen {
				err = errors.New("select_option: option too long")
			}
		}
	case Scroll:
		a.DX = num("delta_x", -maxScroll, maxScroll)
		a.DY = num("delta_y", -maxScroll, maxScroll)
		_, hasX := got["x"]
		_, hasY := got["y"]
		switch _, hasBID := got["bid"]; {
		case hasBID && (hasX || hasY):
			err = errors.New("scroll: give a bid or a point (x, y), not both")
		case hasBID:
			a.BID = bid()
		case hasX != hasY:
			err = errors.New("scroll: a point needs both x and y")
		case hasX:
			a.X, a.Y = num("x", 0, maxCoord), num("y", 0, maxCoord)
		}
	case Press:
		if _, ok := got["bid"]; ok {
			a.BID = bid()
		}
		a.Key = str("key_comb", 64)
		if err == nil && a.Key == "" {
			err = errors.New("press: empty key")
		}
	case Goto:
		a.URL = str("url", 4096)
		if err == nil && strings.TrimSpace(a.URL) == "" {
			err = errors.New("goto: empty url")
		}
	case GoBack:
	case Noop:
		a.WaitMS = DefaultNoopWait
		if _, ok := got["wait_ms"]; ok {
			w := num("wait_ms", 0, maxNoopWait)
			if err == nil && w != math.Trunc(w) {
				err = errors.New("noop: wait_ms must be a whole number")
			}
			a.WaitMS = int(w)
		}
	case SendMsg:
		a.Text = str("text", maxTextLen)
	case KeyboardType:
		a.Text = str("text", maxTextLen)
		if err == nil && a.Text == "" {
			err = errors.New("keyboard_type: empty text")
		}
	}
	if err != nil {
		return Action{}, err
	}
	return a, nil
}

func validBID(b string) bool {
	if b == "" || len(b) > maxBIDLen {
		return false
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		if !(isIdent(c, false) || c == '-' || c == '.' || c == ':') {
			return false
		}
	}
	return true
}
