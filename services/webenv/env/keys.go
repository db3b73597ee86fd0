package env

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp/kb"
)

// Modifier bits of Input.dispatchKeyEvent.
const (
	modAlt   = 1
	modCtrl  = 2
	modMeta  = 4
	modShift = 8
)

// namedKeys maps DOM key names ("Enter", "ArrowLeft", ...) to the runes of
// chromedp's key table.
var namedKeys = func() map[string]rune {
	m := map[string]rune{"Space": ' ', "Spacebar": ' ', "Esc": '\u001b', "Return": '\r'}
	for r, k := range kb.Keys {
		if utf8.RuneCountInString(k.Key) > 1 {
			if old, ok := m[k.Key]; !ok || r < old {
				m[k.Key] = r
			}
		}
	}
	m["Enter"] = '\r'
	return m
}()

// keyCombo is a parsed key combination such as "Control+Shift+a".
type keyCombo struct {
	mods int64
	key  *kb.Key
	r    rune
}

// parseKeyCombo parses "Key" or "Mod+...+Key" with the modifiers Alt,
// Control (Ctrl), Meta (Command, Cmd), ControlOrMeta (Control on Linux) and
// Shift.
func parseKeyCombo(s string) (keyCombo, error) {
	if s == "" {
		return keyCombo{}, errors.New("empty key")
	}
	var parts []string
	if s == "+" {
		parts = []string{"+"}
	} else if strings.HasSuffix(s, "++") { // the "+" key itself
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
		if parts[0] == "" {
			parts = parts[1:]
		}
	} else {
		parts = strings.Split(s, "+")
	}
	var c keyCombo
	for _, m := range parts[:len(parts)-1] {
		switch strings.ToLower(m) {
		case "alt":
			c.mods |= modAlt
		case "control", "ctrl", "controlormeta":
			c.mods |= modCtrl
		case "meta", "command", "cmd":
			c.mods |= modMeta
		case "shift":
			c.mods |= modShift
		default:
			return keyCombo{}, fmt.Errorf("unknown modifier %q in %q", clip(m, 20), clip(s, 40))
		}
	}
	name := parts[len(parts)-1]
	var r rune
	if utf8.RuneCountInString(name) == 1 {
		r, _ = utf8.DecodeRuneInString(name)
	} else if nr, ok := namedKeys[name]; ok {
		r = nr
	} else {
		return keyCombo{}, fmt.Errorf("unknown key %q", clip(name, 20))
	}
	k, ok := kb.Keys[r]
	if !ok {
		return keyCombo{}, fmt.Errorf("unknown key %q", clip(name, 20))
	}
	c.key, c.r = k, r
	if k.Shift {
		c.mods |= modShift
	}
	return c, nil
}

// events returns the key events of the combination: keyDown with text for a
// printable key without Control, Alt or Meta (so that it types), else
// rawKeyDown; then keyUp. Each has key, code and the virtual key codes set,
// as pages that listen for keys expect.
func (c keyCombo) events() []input.DispatchKeyEventParams {
	k := c.key
	down := input.DispatchKeyEventParams{
		Key: k.Key, Code: k.Code, Modifiers: c.mods,
		WindowsVirtualKeyCode: k.Windows, NativeVirtualKeyCode: k.Native,
	}
	up := down
	up.Type = input.DispatchKeyEventTypeKeyUp
	if k.Print && c.mods&(modCtrl|modAlt|modMeta) == 0 {
		down.Type = input.DispatchKeyEventTypeKeyDown
		down.Text, down.UnmodifiedText = k.Text, k.Unmodified
	} else {
		down.Type = input.DispatchKeyEventTypeRawKeyDown
		if c.mods&modCtrl != 0 && strings.EqualFold(k.Key, "a") {
			down.Commands = []string{"selectAll"}
		}
	}
	return []input.DispatchKeyEventParams{down, up}
}
