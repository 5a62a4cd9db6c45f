package vt

import (
	"strconv"
	"unicode/utf8"
)

// ANSIOptions controls RenderANSI.
type ANSIOptions struct {
	// Width and Height of the output; the screen is cropped or padded
	// with blanks. Zero means the screen's size.
	Width, Height int
	// Profile limits the colours used; TrueColor by default.
	Profile Profile
	// Cursor draws a visible cursor as a reverse-video cell.
	Cursor bool
}

// RenderANSI draws s as text with SGR escapes, one line per row joined by
// "\n". Every line is exactly Width cells wide (as lipgloss measures it)
// and ends with all attributes reset, so lines can be placed inside
// lipgloss layouts. Only changes of style are emitted.
func RenderANSI(s *Screen, o ANSIOptions) string {
	w, h := o.Width, o.Height
	if w <= 0 {
		w = s.Cols
	}
	if h <= 0 {
		h = s.Rows
	}
	buf := make([]byte, 0, w*h*2+h*16)
	cx, cy := -1, -1
	if o.Cursor && s.Cursor.Visible {
		cx, cy = s.Cursor.X, s.Cursor.Y
	}
	for y := 0; y < h; y++ {
		if y > 0 {
			buf = append(buf, '\n')
		}
		var pen Style // what the output currently has set
		prev := ' '   // the rune emitted last on this line
		for x := 0; x < w; x++ {
			c := s.Cell(x, y)
			if c.Width == 0 {
				continue // right half of a wide character already drawn
			}
			if c.Width == 2 && x == w-1 {
				c.Rune = ' ' // half a wide character would overflow the line
			}
			st := Style{FG: o.Profile.convert(c.FG), BG: o.Profile.convert(c.BG), Attr: c.Attr}
			if s.Modes.ReverseVideo {
				st.Attr ^= AttrReverse
			}
			if x == cx && y == cy {
				st.Attr ^= AttrReverse
			}
			if st != pen {
				buf = appendSGR(buf, pen, st)
				pen = st
			}
			r := c.Rune
			if r < ' ' || r == softHyphen || (r >= 0x80 && joinsPair(prev, r)) {
				r = ' ' // would merge with its neighbour and shorten the line
			}
			prev = r
			buf = utf8.AppendRune(buf, r)
		}
		if pen != (Style{}) {
			buf = append(buf, "\x1b[m"...)
		}
	}
	return string(buf)
}

var attrCodes = [...]struct {
	a    Attr
	code string
}{
	{AttrBold, "1"}, {AttrFaint, "2"}, {AttrItalic, "3"}, {AttrUnderline, "4"}, {AttrBlink, "5"},
	{AttrReverse, "7"}, {AttrInvisible, "8"}, {AttrStrike, "9"}, {AttrOverline, "53"},
}

// appendSGR emits the shortest simple sequence that turns style from
// into style to: only additions when nothing has to be switched off,
// otherwise a reset followed by the full style.
func appendSGR(buf []byte, from, to Style) []byte {
	if to == (Style{}) {
		return append(buf, "\x1b[m"...)
	}
	reset := from.Attr&^to.Attr != 0 ||
		(from.FG != to.FG && to.FG == DefaultColor) ||
		(from.BG != to.BG && to.BG == DefaultColor)
	buf = append(buf, "\x1b["...)
	n := len(buf)
	if reset {
		buf = append(buf, '0')
		from = Style{}
	}
	for _, ac := range attrCodes {
		if to.Attr&ac.a != 0 && from.Attr&ac.a == 0 {
			buf = sep(buf, n)
			buf = append(buf, ac.code...)
		}
	}
	if to.FG != from.FG {
		buf = appendColor(sep(buf, n), to.FG, 30)
	}
	if to.BG != from.BG {
		buf = appendColor(sep(buf, n), to.BG, 40)
	}
	return append(buf, 'm')
}

func sep(buf []byte, n int) []byte {
	if len(buf) > n {
		buf = append(buf, ';')
	}
	return buf
}

// appendColor writes a colour parameter; base is 30 for fg, 40 for bg.
func appendColor(buf []byte, c Color, base int) []byte {
	switch c.Kind() {
	case KindANSI:
		i := int(c.Index())
		if i < 8 {
			return strconv.AppendInt(buf, int64(base+i), 10)
		}
		return strconv.AppendInt(buf, int64(base+60+i-8), 10)
	case KindPalette:
		buf = strconv.AppendInt(buf, int64(base+8), 10)
		buf = append(buf, ";5;"...)
		return strconv.AppendInt(buf, int64(c.Index()), 10)
	case KindTrueColor:
		r, g, b := c.RGB()
		buf = strconv.AppendInt(buf, int64(base+8), 10)
		buf = append(buf, ";2;"...)
		buf = strconv.AppendInt(buf, int64(r), 10)
		buf = append(buf, ';')
		buf = strconv.AppendInt(buf, int64(g), 10)
		buf = append(buf, ';')
		return strconv.AppendInt(buf, int64(b), 10)
	}
	return strconv.AppendInt(buf, int64(base+9), 10)
}
