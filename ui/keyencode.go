package ui

import (
	"strconv"

	tea "charm.land/bubbletea/v2"
)

// InputModes are the remote terminal's modes that change how keys encode.
type InputModes struct {
	AppCursorKeys  bool // DECCKM: arrows send ESC O x instead of ESC [ x
	BracketedPaste bool // ?2004: pastes are wrapped in ESC[200~ … ESC[201~
}

// letterKeys are keys sent as ESC [ <letter>, or ESC [ 1 ; <mod> <letter>
// with modifiers.
var letterKeys = map[rune]byte{
	tea.KeyUp: 'A', tea.KeyDown: 'B', tea.KeyRight: 'C', tea.KeyLeft: 'D',
	tea.KeyHome: 'H', tea.KeyEnd: 'F',
}

// ss3Keys are F1–F4, sent as ESC O <c> (xterm), ESC [ 1 ; <mod> <c> with
// modifiers.
var ss3Keys = map[rune]byte{tea.KeyF1: 'P', tea.KeyF2: 'Q', tea.KeyF3: 'R', tea.KeyF4: 'S'}

// tildeKeys are keys sent as ESC [ <n> ~, or ESC [ <n> ; <mod> ~.
var tildeKeys = map[rune]int{
	tea.KeyInsert: 2, tea.KeyDelete: 3, tea.KeyPgUp: 5, tea.KeyPgDown: 6,
	tea.KeyF5: 15, tea.KeyF6: 17, tea.KeyF7: 18, tea.KeyF8: 19,
	tea.KeyF9: 20, tea.KeyF10: 21, tea.KeyF11: 23, tea.KeyF12: 24,
	tea.KeyF13: 25, tea.KeyF14: 26, tea.KeyF15: 28, tea.KeyF16: 29,
	tea.KeyF17: 31, tea.KeyF18: 32, tea.KeyF19: 33, tea.KeyF20: 34,
}

// plainKeys are keys that are one byte of their own.
var plainKeys = map[rune]byte{
	tea.KeyEnter: '\r', tea.KeyTab: '\t', tea.KeyEscape: 0x1b, tea.KeyBackspace: 0x7f, tea.KeySpace: ' ',
}

// EncodeKey turns a key press into the bytes an xterm would send to the
// program, so an attached terminal receives exactly what a local one would.
// Alt prefixes ESC to characters; special keys carry modifiers in xterm's
// parameter. It returns nil for keys it cannot encode.
func EncodeKey(k tea.Key, m InputModes) []byte {
	alt := k.Mod.Contains(tea.ModAlt)
	ctrl := k.Mod.Contains(tea.ModCtrl)
	shift := k.Mod.Contains(tea.ModShift)
	esc := func(b ...byte) []byte {
		if alt {
			return append([]byte{0x1b}, b...)
		}
		return b
	}
	// xterm's modifier parameter: 1 + shift + 2·alt + 4·ctrl.
	mod := 1
	if shift {
		mod++
	}
	if alt {
		mod += 2
	}
	if ctrl {
		mod += 4
	}
	switch {
	case k.Code == tea.KeyTab && shift && !ctrl && !alt:
		return []byte("\x1b[Z")
	case k.Text != "" && !ctrl:
		return esc([]byte(k.Text)...)
	case ctrl:
		if b, ok := ctrlByte(k.Code); ok {
			return esc(b)
		}
	}
	if b, ok := plainKeys[k.Code]; ok {
		return esc(b)
	}
	if c, ok := letterKeys[k.Code]; ok {
		switch {
		case mod > 1:
			return []byte("\x1b[1;" + strconv.Itoa(mod) + string(c))
		case m.AppCursorKeys && c >= 'A' && c <= 'D':
			return []byte{0x1b, 'O', c}
		}
		return []byte{0x1b, '[', c}
	}
	if c, ok := ss3Keys[k.Code]; ok {
		if mod > 1 {
			return []byte("\x1b[1;" + strconv.Itoa(mod) + string(c))
		}
		return []byte{0x1b, 'O', c}
	}
	if n, ok := tildeKeys[k.Code]; ok {
		seq := "\x1b[" + strconv.Itoa(n)
		if mod > 1 {
			seq += ";" + strconv.Itoa(mod)
		}
		return []byte(seq + "~")
	}
	if k.Code >= 0x20 && k.Code < tea.KeyExtended && !ctrl {
		return esc([]byte(string(k.Code))...)
	}
	return nil
}

// ctrlByte is the control character Ctrl plus code makes (Ctrl-C is 0x03,
// Ctrl-Space and Ctrl-@ are NUL, Ctrl-? is DEL).
func ctrlByte(code rune) (byte, bool) {
	switch {
	case code >= 'a' && code <= 'z':
		return byte(code - 'a' + 1), true
	case code >= '@' && code <= '_': // @, A–Z, [ \ ] ^ _
		return byte(code - '@'), true
	case code == ' ' || code == '2':
		return 0, true
	case code == '?' || code == '8':
		return 0x7f, true
	case code >= '3' && code <= '7': // xterm: Ctrl-3…7 are ESC, FS, GS, RS, US
		return byte(code - '3' + 0x1b), true
	}
	return 0, false
}

// EncodePaste wraps pasted text for programs that asked for bracketed paste,
// and strips any end marker inside the text so a paste cannot smuggle
// keystrokes past the bracket.
func EncodePaste(text string, m InputModes) []byte {
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
