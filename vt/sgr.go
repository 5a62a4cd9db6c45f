package vt

// params holds the numeric parameters of a control sequence. A value of -1
// means the parameter was empty. colon[i] is true when parameter i was
// introduced by ':' (an ISO 8613-6 sub-parameter of the one before).
type params struct {
	v     [maxParams]int32
	colon [maxParams]bool
	n     int
}

const maxParams = 32

// get returns parameter i, or def when it is missing or empty.
func (p *params) get(i int, def int) int {
	if i >= p.n || p.v[i] < 0 {
		return def
	}
	return int(p.v[i])
}

// count returns parameter i as a repeat count: missing, empty and 0 all
// mean 1, and huge values are capped.
func (p *params) count(i int, limit int) int {
	n := p.get(i, 1)
	if n < 1 {
		n = 1
	}
	if n > limit {
		n = limit
	}
	return n
}

// applySGR updates st with the Select Graphic Rendition parameters p.
// Both the semicolon (38;2;r;g;b) and colon (38:2::r:g:b) forms of
// extended colours are understood.
func applySGR(st *Style, p *params) {
	if p.n == 0 {
		*st = Style{}
		return
	}
	for i := 0; i < p.n; {
		// j is the end of this parameter's colon group.
		j := i + 1
		for j < p.n && p.colon[j] {
			j++
		}
		a := p.get(i, 0)
		switch {
		case a == 0:
			*st = Style{}
		case a == 1:
			st.Attr |= AttrBold
		case a == 2:
			st.Attr |= AttrFaint
		case a == 3:
			st.Attr |= AttrItalic
		case a == 4:
			if j > i+1 && p.get(i+1, 0) == 0 {
				st.Attr &^= AttrUnderline
			} else {
				st.Attr |= AttrUnderline
			}
		case a == 5 || a == 6:
			st.Attr |= AttrBlink
		case a == 7:
			st.Attr |= AttrReverse
		case a == 8:
			st.Attr |= AttrInvisible
		case a == 9:
			st.Attr |= AttrStrike
		case a == 21:
			st.Attr |= AttrUnderline // double underline, drawn single
		case a == 22:
			st.Attr &^= AttrBold | AttrFaint
		case a == 23:
			st.Attr &^= AttrItalic
		case a == 24:
			st.Attr &^= AttrUnderline
		case a == 25:
			st.Attr &^= AttrBlink
		case a == 27:
			st.Attr &^= AttrReverse
		case a == 28:
			st.Attr &^= AttrInvisible
		case a == 29:
			st.Attr &^= AttrStrike
		case a >= 30 && a <= 37:
			st.FG = Indexed(uint8(a - 30))
		case a == 38 || a == 48 || a == 58:
			var c Color
			var ok bool
			if j > i+1 {
				c, ok = extColorColon(p, i+1, j)
			} else {
				c, ok, j = extColorSemicolon(p, i+1)
			}
			if ok && a == 38 {
				st.FG = c
			} else if ok && a == 48 {
				st.BG = c
			} // 58 (underline colour) is parsed only to skip it
		case a == 39:
			st.FG = DefaultColor
		case a >= 40 && a <= 47:
			st.BG = Indexed(uint8(a - 40))
		case a == 49:
			st.BG = DefaultColor
		case a == 53:
			st.Attr |= AttrOverline
		case a == 55:
			st.Attr &^= AttrOverline
		case a >= 90 && a <= 97:
			st.FG = Indexed(uint8(a - 90 + 8))
		case a >= 100 && a <= 107:
			st.BG = Indexed(uint8(a - 100 + 8))
		}
		i = j
	}
}

// extColorSemicolon reads "5;n" or "2;r;g;b" starting at i and returns the
// index just past what it used.
func extColorSemicolon(p *params, i int) (Color, bool, int) {
	switch p.get(i, -1) {
	case 5:
		if i+1 < p.n {
			n := p.get(i+1, 0)
			return Indexed(uint8(n)), n >= 0 && n <= 255, i + 2
		}
		return 0, false, p.n
	case 2:
		if i+3 < p.n {
			r, g, b := p.get(i+1, 0), p.get(i+2, 0), p.get(i+3, 0)
			return RGB(uint8(r), uint8(g), uint8(b)), r <= 255 && g <= 255 && b <= 255, i + 4
		}
		return 0, false, p.n
	}
	return 0, false, i + 1
}

// extColorColon reads the colon form: 5:n, 2:r:g:b or 2:cs:r:g:b.
func extColorColon(p *params, i, end int) (Color, bool) {
	switch p.get(i, -1) {
	case 5:
		if end-i >= 2 {
			n := p.get(i+1, 0)
			return Indexed(uint8(n)), n <= 255
		}
	case 2:
		k := i + 1
		if end-i >= 5 {
			k = i + 2 // skip the colour-space id
		}
		if end-k >= 3 {
			r, g, b := p.get(k, 0), p.get(k+1, 0), p.get(k+2, 0)
			return RGB(uint8(r), uint8(g), uint8(b)), r <= 255 && g <= 255 && b <= 255
		}
	}
	return 0, false
}
