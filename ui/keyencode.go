package ui

import (
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
)

// InputModes are the remote terminal's modes that change how keys encode.
type InputModes struct {
	AppCursorKeys  bool // DECCKM: arrows send ESC O x instead of ESC [ x
	BracketedPaste bool // ?2004: pastes are wrapped in ESC[200~ … ESC[201~
}

// csiKeys are keys sent as ESC [ <seq>.
var csiKeys = map[tea.KeyType]string{
	tea.KeyShiftTab: "Z",
	tea.KeyHome:     "H", tea.KeyEnd: "F",
	tea.KeyPgUp: "5~", tea.KeyPgDown: "6~", tea.KeyInsert: "2~", tea.KeyDelete: "3~",
	tea.KeyCtrlPgUp: "5;5~", tea.KeyCtrlPgDown: "6;5~",
	tea.KeyCtrlUp: "1;5A", tea.KeyCtrlDown: "1;5B", tea.KeyCtrlRight: "1;5C", tea.KeyCtrlLeft: "1;5D",
	tea.KeyCtrlHome: "1;5H", tea.KeyCtrlEnd: "1;5F",
	tea.KeyShiftUp: "1;2A", tea.KeyShiftDown: "1;2B", tea.KeyShiftRight: "1;2C", tea.KeyShiftLeft: "1;2D",
	tea.KeyShiftHome: "1;2H", tea.KeyShiftEnd: "1;2F",
	tea.KeyCtrlShiftUp: "1;6A", tea.KeyCtrlShiftDown: "1;6B", tea.KeyCtrlShiftRight: "1;6C", tea.KeyCtrlShiftLeft: "1;6D",
	tea.KeyCtrlShiftHome: "1;6H", tea.KeyCtrlShiftEnd: "1;6F",
	tea.KeyF5: "15~", tea.KeyF6: "17~", tea.KeyF7: "18~", tea.KeyF8: "19~",
	tea.KeyF9: "20~", tea.KeyF10: "21~", tea.KeyF11: "23~", tea.KeyF12: "24~",
	tea.KeyF13: "25~", tea.KeyF14: "26~", tea.KeyF15: "28~", tea.KeyF16: "29~",
	tea.KeyF17: "31~", tea.KeyF18: "32~", tea.KeyF19: "33~", tea.KeyF20: "34~",
}

// cursorKeys are the arrows, whose prefix depends on DECCKM.
var cursorKeys = map[tea.KeyType]byte{tea.KeyUp: 'A', tea.KeyDown: 'B', tea.KeyRight: 'C', tea.KeyLeft: 'D'}

// ss3Keys are F1–F4, always sent as ESC O <c> (xterm).
var ss3Keys = map[tea.KeyType]byte{tea.KeyF1: 'P', tea.KeyF2: 'Q', tea.KeyF3: 'R', tea.KeyF4: 'S'}

// EncodeKey turns a key event into the bytes an xterm would send to the
// program, so an attached terminal receives exactly what a local one would.
// Alt prefixes ESC. It returns nil for keys it cannot encode.
func EncodeKey(k tea.KeyMsg, m InputModes) []byte {
	var out []byte
	if k.Alt {
		out = append(out, 0x1b)
	}
	switch {
	case k.Type == tea.KeyRunes:
		if k.Paste {
			return append(out, encodePaste(string(k.Runes), m)...)
		}
		for _, r := range k.Runes {
			out = utf8.AppendRune(out, r)
		}
		return out
	case k.Type == tea.KeySpace:
		return append(out, ' ')
	case k.Type >= 0 && k.Type < 0x20 || k.Type == 0x7f:
		// Control characters (Ctrl-C, Enter, Tab, Esc, Backspace) are their
		// own byte values in Bubble Tea v1.
		return append(out, byte(k.Type))
	}
	if c, ok := cursorKeys[k.Type]; ok {
		if m.AppCursorKeys {
			return append(out, 0x1b, 'O', c)
		}
		return append(out, 0x1b, '[', c)
	}
	if c, ok := ss3Keys[k.Type]; ok {
		return append(out, 0x1b, 'O', c)
	}
	if seq, ok := csiKeys[k.Type]; ok {
		return append(append(out, 0x1b, '['), seq...)
	}
	return nil
}

// encodePaste wraps pasted text for programs that asked for bracketed paste,
// and strips any end marker inside the text so a paste cannot smuggle
// keystrokes past the bracket.
func encodePaste(text string, m InputModes) []byte {
	if !m.BracketedPaste {
		return []byte(text)
	}
	const start, end = "\x1b[200~", "\x1b[201~"
	clean := []byte(nil)
	for i := 0; i < len(text); {
		if len(text)-i >= len(end) && text[i:i+len(end)] == end {
			i += len(end)
			continue
		}
		clean = append(clean, text[i])
		i++
	}
	return append(append([]byte(start), clean...), end...)
}
