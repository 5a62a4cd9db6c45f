package vt

import (
	"strconv"

	"github.com/hinshun/vt10x"
)

// csiDispatch handles a complete control sequence. Sequences vt10x
// understands are re-emitted in a canonical form (plain decimal numbers,
// no empty or zero counts) because vt10x misreads empty parameters
// ("CSI ;5H" homes the cursor) and treats a count of 0 literally.
func (e *VT10x) csiDispatch(final byte) {
	ps := &e.p
	p := &ps.prm
	if ps.inter != 0 {
		if ps.inter == '!' && final == 'p' && ps.priv == 0 {
			e.softReset()
		}
		return // DECSCUSR, DECRQM and friends: nothing to show
	}
	switch ps.priv {
	case '?':
		switch final {
		case 'h', 'l':
			e.decModes(final == 'h')
		case 'J', 'K': // selective erase: we have no protected cells
			e.erase(final, p.get(0, 0))
		}
		return
	case '>':
		if final == 'c' && p.get(0, 0) == 0 {
			e.reply(replyDA2)
		}
		return // includes "CSI > 4;1 m", which vt10x took for SGR 0
	case 0:
	default:
		return
	}

	switch final {
	case 'm':
		st := e.pen
		applySGR(&st, p)
		e.setPen(st)
	case 'b': // REP
		if e.lastRune >= 0 {
			r := e.lastRune
			for n := p.count(0, 65535); n > 0; n-- {
				e.printMapped(r)
			}
		}
	case 'c': // DA
		if p.get(0, 0) == 0 {
			e.reply(replyDA1)
		}
	case 'A', 'B', 'e', 'E', 'F':
		e.vertical(final, p.count(0, 65535))
	case 'C', 'a', 'D':
		e.emitCSI(final, p.count(0, 65535))
	case 'I', 'Z': // CHT, CBT loop per tab in vt10x: bound them
		e.emitCSI(final, p.count(0, e.cols))
	case '@', 'P', 'X', 'L', 'M', 'S', 'T':
		e.useErasePen()
		e.emitCSI(final, p.count(0, 65535))
	case 'G', '`', 'd':
		e.emitCSI(final, p.get(0, 1))
	case 'H', 'f':
		e.emitCSI(final, p.get(0, 1), p.get(1, 1))
	case 'J', 'K':
		e.erase(final, p.get(0, 0))
	case 'g':
		if n := p.get(0, 0); n == 0 || n == 3 {
			e.emitCSI('g', n)
		}
	case 'h', 'l':
		for i := 0; i < p.n; i++ {
			switch p.get(i, 0) {
			case 4:
				e.insert = final == 'h'
			case 20:
				e.emitCSI(final, 20)
			}
		}
	case 'n':
		if n := p.get(0, 0); n == 5 || n == 6 {
			e.emitCSI('n', n)
		}
	case 'r':
		e.setMargins(p.get(0, 1), p.get(1, e.rows))
	case 's':
		if p.n == 0 {
			e.save()
			e.out = append(e.out, "\x1b[s"...)
		}
	case 'u':
		if p.n == 0 {
			e.out = append(e.out, "\x1b[u"...)
			e.restore()
		}
	}
}

// emitCSI appends "CSI a;b final" for vt10x.
func (e *VT10x) emitCSI(final byte, args ...int) {
	e.out = append(e.out, 0x1b, '[')
	for i, a := range args {
		if i > 0 {
			e.out = append(e.out, ';')
		}
		e.out = strconv.AppendInt(e.out, int64(a), 10)
	}
	e.out = append(e.out, final)
}

// vertical moves the cursor up or down. xterm stops at the scroll margin
// when the cursor starts inside the region; vt10x only stops at the edge.
func (e *VT10x) vertical(final byte, n int) {
	e.flush()
	y := e.term.Cursor().Y
	up := final == 'A' || final == 'F'
	if up && y >= e.top {
		n = min(n, y-e.top)
	} else if !up && y <= e.bottom {
		n = min(n, e.bottom-y)
	}
	if n == 0 {
		if final == 'E' || final == 'F' {
			e.out = append(e.out, '\r')
		}
		return
	}
	e.emitCSI(final, n)
}

// erase handles ED and EL. ED 1 in vt10x misses row 0 when the cursor is
// on row 1, so that row is cleared explicitly; ED 3 (scrollback) is a
// no-op because our scrollback is the raw byte ring.
func (e *VT10x) erase(final byte, mode int) {
	if mode < 0 || mode > 2 {
		return
	}
	e.useErasePen()
	e.emitCSI(final, mode)
	if final != 'J' || mode != 1 {
		return
	}
	e.flush()
	c := e.term.Cursor()
	if c.Y != 1 {
		return
	}
	if e.origin {
		e.out = append(e.out, "\x1b[?6l"...)
	}
	e.out = append(e.out, "\x1b[1;1H\x1b[2K"...)
	if e.origin {
		e.out = append(e.out, "\x1b[?6h"...)
		e.emitCSI('H', c.Y-e.top+1, c.X+1)
	} else {
		e.emitCSI('H', c.Y+1, c.X+1)
	}
}

// setMargins handles DECSTBM; xterm ignores regions smaller than two rows
// (vt10x swaps the bounds instead).
func (e *VT10x) setMargins(top, bottom int) {
	if top < 1 {
		top = 1
	}
	if bottom < 1 || bottom > e.rows {
		bottom = e.rows
	}
	if top >= bottom {
		return
	}
	e.top, e.bottom = top-1, bottom-1
	e.emitCSI('r', top, bottom)
}

// decModes handles DEC private modes (CSI ? … h/l).
func (e *VT10x) decModes(set bool) {
	p := &e.p.prm
	final := byte('l')
	if set {
		final = 'h'
	}
	for i := 0; i < p.n; i++ {
		m := p.get(i, 0)
		switch m {
		case 1, 5, 25, 9, 1000, 1002, 1003, 1004:
			e.out = append(e.out, "\x1b[?"...)
			e.out = strconv.AppendInt(e.out, int64(m), 10)
			e.out = append(e.out, final)
		case 6: // DECOM homes the cursor
			e.origin = set
			e.out = append(e.out, "\x1b[?6"...)
			e.out = append(e.out, final)
		case 7:
			e.noWrap = !set
			e.out = append(e.out, "\x1b[?7"...)
			e.out = append(e.out, final)
		case 1005, 1006, 1015:
			enc := map[int]MouseEncoding{1005: MouseEncUTF8, 1006: MouseEncSGR, 1015: MouseEncURXVT}[m]
			if set {
				e.mouseEnc = enc
			} else if e.mouseEnc == enc {
				e.mouseEnc = MouseEncDefault
			}
		case 2004:
			e.bracketed = set
		case 47, 1047, 1049:
			e.altScreen(m, set)
		case 1048:
			if set {
				e.save()
				e.out = append(e.out, "\x1b7"...)
			} else {
				e.out = append(e.out, "\x1b8"...)
				e.restore()
			}
		}
	}
}

// altScreen switches screens. vt10x toggles on a reset even when it is
// not on the alternate screen (so "CSI ? 1049 l" on the main screen
// switched to a stale alternate screen); such resets are dropped here.
// The ids on the screen being hidden are remembered so that style
// collection keeps them.
func (e *VT10x) altScreen(m int, set bool) {
	e.flush()
	alt := e.term.Mode()&vt10x.ModeAltScreen != 0
	if !set && !alt {
		if m == 1049 {
			e.out = append(e.out, "\x1b8"...)
			e.restore()
		}
		return
	}
	if set && m == 1049 {
		e.save()
	}
	var shown map[uint32]struct{}
	if set != alt {
		shown = e.screenIDs()
	}
	e.usePen(0) // vt10x clears with its pen
	e.out = append(e.out, "\x1b[?"...)
	e.out = strconv.AppendInt(e.out, int64(m), 10)
	if set {
		e.out = append(e.out, 'h')
	} else {
		e.out = append(e.out, 'l')
	}
	e.flush()
	if m == 1049 && !set {
		e.restore()
	}
	if set != alt {
		e.hidden = shown
	}
}

// softReset handles DECSTR: pen, insert mode, cursor keys, keypad and
// cursor visibility go back to their defaults.
func (e *VT10x) softReset() {
	e.setPen(Style{})
	e.insert = false
	e.g, e.shift = [2]bool{}, 0
	e.out = append(e.out, "\x1b[?25h\x1b[?1l\x1b>"...)
	if e.origin {
		// Leaving origin mode homes vt10x's cursor; DECSTR must not move it.
		e.origin = false
		e.flush()
		c := e.term.Cursor()
		e.out = append(e.out, "\x1b[?6l"...)
		e.emitCSI('H', c.Y+1, c.X+1)
	}
}
