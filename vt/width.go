package vt

import "github.com/charmbracelet/x/ansi"

// runeWidth is the number of cells r takes. It uses the same measure as
// lipgloss (x/ansi), so rendered lines have exactly the width lipgloss
// expects. Zero-width runes (combining marks, joiners) return 0.
func runeWidth(r rune) int {
	if r < 0x300 {
		// The soft hyphen is the one rune below U+0300 that x/ansi gives no
		// cell: counted as one, it left every line holding it a cell short.
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == softHyphen {
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

const softHyphen = '\u00AD'

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

// plainRune reports whether r is from a range where no character joins
// the one before it into a single grapheme cluster (Latin, punctuation,
// box drawing, CJK, kana), so the slower checks below can be skipped.
func plainRune(r rune) bool {
	return r < 0x300 || (r >= 0x2010 && r < 0x2E80) || (r >= 0x3040 && r <= 0x9FFF) || r == utf8RuneError
}

const utf8RuneError = '\uFFFD'

// joinsPrevious reports whether r would merge with an ordinary character
// before it into one grapheme cluster (combining and spacing marks,
// joiners). Such runes cannot have a cell of their own: a renderer would
// draw them on top of the previous cell and lines would come out short.
func joinsPrevious(r rune) bool {
	if plainRune(r) {
		return false
	}
	var buf [5]byte
	buf[0] = 'a'
	n := encodeRune(buf[1:], r)
	return ansi.StringWidth(string(buf[:n+1])) != 1+runeWidth(r)
}

// joinsPair reports whether prev and r, drawn side by side, form one
// grapheme cluster of a different width than the two cells (Hangul jamo
// sequences, regional-indicator pairs, emoji modifiers).
func joinsPair(prev, r rune) bool {
	if plainRune(r) && (prev < 0x1100 || prev > 0x11FF) {
		return false
	}
	var buf [8]byte
	n := encodeRune(buf[:], prev)
	n += encodeRune(buf[n:], r)
	return ansi.StringWidth(string(buf[:n])) != runeWidth(prev)+runeWidth(r)
}
