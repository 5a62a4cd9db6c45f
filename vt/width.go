package vt

import "github.com/charmbracelet/x/ansi"

// runeWidth is the number of cells r takes. It uses the same measure as
// lipgloss (x/ansi), so rendered lines have exactly the width lipgloss
// expects. Zero-width runes (combining marks, joiners) return 0.
func runeWidth(r rune) int {
	if r < 0x300 {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) {
			return 0
		}
		return 1
	}
	var buf [4]byte
	n := encodeRune(buf[:], r)
	w := ansi.StringWidth(string(buf[:n]))
	if w > 2 {
		w = 2
	}
	return w
}

func encodeRune(p []byte, r rune) int {
	switch {
	case r < 0x80:
		p[0] = byte(r)
		return 1
	case r < 0x800:
		p[0] = 0xc0 | byte(r>>6)
		p[1] = 0x80 | byte(r)&0x3f
		return 2
	case r < 0x10000:
		p[0] = 0xe0 | byte(r>>12)
		p[1] = 0x80 | byte(r>>6)&0x3f
		p[2] = 0x80 | byte(r)&0x3f
		return 3
	default:
		p[0] = 0xf0 | byte(r>>18)
		p[1] = 0x80 | byte(r>>12)&0x3f
		p[2] = 0x80 | byte(r>>6)&0x3f
		p[3] = 0x80 | byte(r)&0x3f
		return 4
	}
}
