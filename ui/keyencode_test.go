package ui

import (
	"bytes"
	"testing"

	tea "github.com/charmbracelet/bubbletea"
)

func TestEncodeKey(t *testing.T) {
	runes := func(s string) tea.KeyMsg { return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(s)} }
	cases := []struct {
		name  string
		key   tea.KeyMsg
		modes InputModes
		want  string
	}{
		{"letter", runes("a"), InputModes{}, "a"},
		{"utf8", runes("é日"), InputModes{}, "é日"},
		{"space", tea.KeyMsg{Type: tea.KeySpace}, InputModes{}, " "},
		{"ctrl-c goes to the program", tea.KeyMsg{Type: tea.KeyCtrlC}, InputModes{}, "\x03"},
		{"ctrl-d", tea.KeyMsg{Type: tea.KeyCtrlD}, InputModes{}, "\x04"},
		{"ctrl-space", tea.KeyMsg{Type: tea.KeyCtrlAt}, InputModes{}, "\x00"},
		{"enter", tea.KeyMsg{Type: tea.KeyEnter}, InputModes{}, "\r"},
		{"tab", tea.KeyMsg{Type: tea.KeyTab}, InputModes{}, "\t"},
		{"backspace", tea.KeyMsg{Type: tea.KeyBackspace}, InputModes{}, "\x7f"},
		{"esc", tea.KeyMsg{Type: tea.KeyEsc}, InputModes{}, "\x1b"},
		{"up", tea.KeyMsg{Type: tea.KeyUp}, InputModes{}, "\x1b[A"},
		{"left app-cursor", tea.KeyMsg{Type: tea.KeyLeft}, InputModes{AppCursorKeys: true}, "\x1bOD"},
		{"ctrl-right", tea.KeyMsg{Type: tea.KeyCtrlRight}, InputModes{}, "\x1b[1;5C"},
		{"shift-up", tea.KeyMsg{Type: tea.KeyShiftUp}, InputModes{}, "\x1b[1;2A"},
		{"shift-tab", tea.KeyMsg{Type: tea.KeyShiftTab}, InputModes{}, "\x1b[Z"},
		{"home", tea.KeyMsg{Type: tea.KeyHome}, InputModes{}, "\x1b[H"},
		{"pgdown", tea.KeyMsg{Type: tea.KeyPgDown}, InputModes{}, "\x1b[6~"},
		{"delete", tea.KeyMsg{Type: tea.KeyDelete}, InputModes{}, "\x1b[3~"},
		{"f1", tea.KeyMsg{Type: tea.KeyF1}, InputModes{}, "\x1bOP"},
		{"f5", tea.KeyMsg{Type: tea.KeyF5}, InputModes{}, "\x1b[15~"},
		{"f12", tea.KeyMsg{Type: tea.KeyF12}, InputModes{}, "\x1b[24~"},
		{"alt-x", tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("x"), Alt: true}, InputModes{}, "\x1bx"},
		{"alt-up", tea.KeyMsg{Type: tea.KeyUp, Alt: true}, InputModes{}, "\x1b\x1b[A"},
		{"alt-backspace", tea.KeyMsg{Type: tea.KeyBackspace, Alt: true}, InputModes{}, "\x1b\x7f"},
		{"paste plain", tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("ls\n"), Paste: true}, InputModes{}, "ls\n"},
		{"paste bracketed", tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("ls\n"), Paste: true}, InputModes{BracketedPaste: true}, "\x1b[200~ls\n\x1b[201~"},
		{"paste cannot close the bracket early", tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("a\x1b[201~rm"), Paste: true}, InputModes{BracketedPaste: true}, "\x1b[200~arm\x1b[201~"},
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

func TestEncodeKeyCoversEveryControlByte(t *testing.T) {
	for b := 0; b < 0x20; b++ {
		got := EncodeKey(tea.KeyMsg{Type: tea.KeyType(b)}, InputModes{})
		if len(got) != 1 || got[0] != byte(b) {
			t.Errorf("control %#x encodes as %q", b, got)
		}
	}
}
