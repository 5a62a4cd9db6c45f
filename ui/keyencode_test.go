package ui

import (
	"bytes"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestEncodeKey(t *testing.T) {
	text := func(s string) tea.Key { return tea.Key{Code: []rune(s)[0], Text: s} }
	k := func(code rune, mod tea.KeyMod) tea.Key { return tea.Key{Code: code, Mod: mod} }
	cases := []struct {
		name  string
		key   tea.Key
		modes InputModes
		want  string
	}{
		{"letter", text("a"), InputModes{}, "a"},
		{"utf8", text("é日"), InputModes{}, "é日"},
		{"space", tea.Key{Code: tea.KeySpace, Text: " "}, InputModes{}, " "},
		{"ctrl-c goes to the program", k('c', tea.ModCtrl), InputModes{}, "\x03"},
		{"ctrl-d", k('d', tea.ModCtrl), InputModes{}, "\x04"},
		{"ctrl-space", k(tea.KeySpace, tea.ModCtrl), InputModes{}, "\x00"},
		{"ctrl-]", k(']', tea.ModCtrl), InputModes{}, "\x1d"},
		{"enter", k(tea.KeyEnter, 0), InputModes{}, "\r"},
		{"tab", k(tea.KeyTab, 0), InputModes{}, "\t"},
		{"backspace", k(tea.KeyBackspace, 0), InputModes{}, "\x7f"},
		{"esc", k(tea.KeyEscape, 0), InputModes{}, "\x1b"},
		{"up", k(tea.KeyUp, 0), InputModes{}, "\x1b[A"},
		{"left app-cursor", k(tea.KeyLeft, 0), InputModes{AppCursorKeys: true}, "\x1bOD"},
		{"ctrl-right", k(tea.KeyRight, tea.ModCtrl), InputModes{}, "\x1b[1;5C"},
		{"shift-up", k(tea.KeyUp, tea.ModShift), InputModes{}, "\x1b[1;2A"},
		{"ctrl-shift-home", k(tea.KeyHome, tea.ModCtrl|tea.ModShift), InputModes{}, "\x1b[1;6H"},
		{"shift-tab", k(tea.KeyTab, tea.ModShift), InputModes{}, "\x1b[Z"},
		{"home", k(tea.KeyHome, 0), InputModes{}, "\x1b[H"},
		{"pgdown", k(tea.KeyPgDown, 0), InputModes{}, "\x1b[6~"},
		{"ctrl-pgup", k(tea.KeyPgUp, tea.ModCtrl), InputModes{}, "\x1b[5;5~"},
		{"delete", k(tea.KeyDelete, 0), InputModes{}, "\x1b[3~"},
		{"f1", k(tea.KeyF1, 0), InputModes{}, "\x1bOP"},
		{"shift-f1", k(tea.KeyF1, tea.ModShift), InputModes{}, "\x1b[1;2P"},
		{"f5", k(tea.KeyF5, 0), InputModes{}, "\x1b[15~"},
		{"f12", k(tea.KeyF12, 0), InputModes{}, "\x1b[24~"},
		{"alt-x", tea.Key{Code: 'x', Text: "x", Mod: tea.ModAlt}, InputModes{}, "\x1bx"},
		{"alt-x without text", k('x', tea.ModAlt), InputModes{}, "\x1bx"},
		{"alt-up", k(tea.KeyUp, tea.ModAlt), InputModes{}, "\x1b[1;3A"},
		{"alt-backspace", k(tea.KeyBackspace, tea.ModAlt), InputModes{}, "\x1b\x7f"},
		{"ctrl-alt-c", k('c', tea.ModCtrl|tea.ModAlt), InputModes{}, "\x1b\x03"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := EncodeKey(c.key, c.modes)
			if !bytes.Equal(got, []byte(c.want)) {
				t.Fatalf("EncodeKey(%v) = %q, want %q", c.key, got, c.want)
			}
		})
	}
}

func TestEncodePaste(t *testing.T) {
	cases := []struct {
		name, text string
		modes      InputModes
		want       string
	}{
		{"plain", "ls\n", InputModes{}, "ls\n"},
		{"bracketed", "ls\n", InputModes{BracketedPaste: true}, "\x1b[200~ls\n\x1b[201~"},
		{"cannot close the bracket early", "a\x1b[201~rm", InputModes{BracketedPaste: true}, "\x1b[200~arm\x1b[201~"},
	}
	for _, c := range cases {
		if got := EncodePaste(c.text, c.modes); string(got) != c.want {
			t.Errorf("%s: EncodePaste(%q) = %q, want %q", c.name, c.text, got, c.want)
		}
	}
}

// Every Ctrl+letter is its control byte, as a local terminal sends it.
func TestEncodeKeyCoversEveryCtrlLetter(t *testing.T) {
	for c := 'a'; c <= 'z'; c++ {
		got := EncodeKey(tea.Key{Code: c, Mod: tea.ModCtrl}, InputModes{})
		if len(got) != 1 || got[0] != byte(c-'a'+1) {
			t.Errorf("ctrl+%c encodes as %q", c, got)
		}
	}
}
