package vt

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hinshun/vt10x"
)

// vt10x cursor state bit (unexported there): a wrap is pending.
const vtWrapNext = 2

// Answers to identification queries: a VT220-class terminal with colour.
const (
	replyDA1 = "\x1b[?62;22c"
	replyDA2 = "\x1b[>1;10;0c"
)

// print shows one character with the current pen.
func (e *VT10x) print(r rune) {
	r = mapCharset(r, e.g[e.shift])
	if r == wideTail || (r >= 0x80 && r < 0xa0) {
		r = utf8.RuneError
	}
	e.printMapped(r)
}

func (e *VT10x) printMapped(r rune) {
	w := runeWidth(r)
	if w == 0 || joinsPrevious(r) {
		return // combining marks and joiners are dropped (no grapheme support)
	}
	e.lastRune = r
	e.usePen(e.penID)
	if w == 2 {
		e.flush()
		c := e.term.Cursor()
		if e.cols < 2 || (e.noWrap && c.X == e.cols-1) {
			return // does not fit and cannot wrap
		}
		if c.X == e.cols-1 && c.State&vtWrapNext == 0 {
			// Does not fit on this line: fill the last cell and wrap.
			e.out = append(e.out, ' ')
		}
		if e.insert {
			e.out = append(e.out, "\x1b[2@"...)
		}
		e.out = utf8.AppendRune(e.out, r)
		e.out = utf8.AppendRune(e.out, wideTail)
		return
	}
	if e.insert {
		// vt10x has no insert mode: open a blank cell first.
		e.out = append(e.out, "\x1b[@"...)
	}
	e.out = utf8.AppendRune(e.out, r)
}

// usePen makes vt10x apply style id to what it writes next.
func (e *VT10x) usePen(id uint32) {
	if e.vtPen == id {
		return
	}
	e.vtPen = id
	// Only the foreground field is used, and vt10x spends most of its time
	// per byte, so keep these short: "39" is id 0 and "38;5;n" serves the
	// first 255 ids (they are ids, not palette colours, to our decoder).
	switch {
	case id == 0:
		e.out = append(e.out, "\x1b[39m"...)
		return
	case id < 256:
		e.out = append(e.out, "\x1b[38;5;"...)
		e.out = strconv.AppendUint(e.out, uint64(id), 10)
		e.out = append(e.out, 'm')
		return
	}
	e.out = append(e.out, "\x1b[38;2;"...)
	e.out = strconv.AppendUint(e.out, uint64(id>>16&0xff), 10)
	e.out = append(e.out, ';')
	e.out = strconv.AppendUint(e.out, uint64(id>>8&0xff), 10)
	e.out = append(e.out, ';')
	e.out = strconv.AppendUint(e.out, uint64(id&0xff), 10)
	e.out = append(e.out, 'm')
}

// useErasePen selects the style erased cells get: only the background of
// the pen, as xterm does (vt10x would copy the whole pen, underline too).
func (e *VT10x) useErasePen() {
	e.usePen(e.intern(Style{BG: e.pen.BG}))
}

// setPen changes the program's SGR state.
func (e *VT10x) setPen(s Style) {
	e.pen = s
	e.penID = e.intern(s)
}

// intern returns the id of s, collecting unused ids when the table is full.
func (e *VT10x) intern(s Style) uint32 {
	if id, ok := e.styles.lookup(s); ok {
		return id
	}
	if id, ok := e.styles.add(s); ok {
		return id
	}
	e.collectStyles()
	if id, ok := e.styles.add(s); ok {
		return id
	}
	return 0 // cannot happen: the limit exceeds the live ids
}

// collectStyles frees the ids no cell, pen or saved state refers to.
func (e *VT10x) collectStyles() {
	e.flush()
	live := e.screenIDs()
	for id := range e.hidden {
		live[id] = struct{}{}
	}
	for _, id := range []uint32{e.penID, e.vtPen, e.saved.penID, e.saved.vtPen} {
		live[id] = struct{}{}
	}
	e.styles.sweep(func(id uint32) bool { _, ok := live[id]; return ok })
	if need := 2*e.cols*e.rows + 16; e.styles.limit < need {
		e.styles.limit = need // a huge screen must not starve
	}
}

// screenIDs returns the style ids used on the visible screen.
func (e *VT10x) screenIDs() map[uint32]struct{} {
	ids := map[uint32]struct{}{}
	for y := 0; y < e.rows; y++ {
		for x := 0; x < e.cols; x++ {
			ids[styleID(e.term.Cell(x, y).FG)] = struct{}{}
		}
	}
	return ids
}

func (e *VT10x) escDispatch(inter, b byte) {
	switch inter {
	case 0:
	case '(', ')':
		// G0/G1 designation; only DEC graphics vs. the rest matters.
		if inter == '(' {
			e.g[0] = b == '0'
		} else {
			e.g[1] = b == '0'
		}
		return
	case '#':
		if b == '8' { // DECALN
			e.usePen(0)
			e.out = append(e.out, "\x1b#8"...)
		}
		return
	default:
		return
	}
	switch b {
	case '7': // DECSC
		e.save()
		e.out = append(e.out, "\x1b7"...)
	case '8': // DECRC
		e.out = append(e.out, "\x1b8"...)
		e.restore()
	case 'c': // RIS
		e.hardReset()
	case 'D', 'M': // IND, RI: may scroll, filling with the erase pen
		e.useErasePen()
		e.out = append(e.out, 0x1b, b)
	case 'E', 'H', '=', '>': // NEL, HTS, DECKPAM, DECKPNM
		e.out = append(e.out, 0x1b, b)
	case 'Z': // DECID
		e.reply(replyDA1)
	}
}

func (e *VT10x) save() {
	e.saved = savedState{pen: e.pen, penID: e.penID, vtPen: e.vtPen, g: e.g, shift: e.shift, origin: e.origin}
}

// restore follows a DECRC that vt10x will also see; vt10x restores its
// own pen, so ours is re-sent before the next character.
func (e *VT10x) restore() {
	s := e.saved
	e.pen, e.penID, e.g, e.shift, e.origin = s.pen, s.penID, s.g, s.shift, s.origin
	e.vtPen = noPen
	if _, ok := e.styles.lookup(e.pen); !ok || e.styles.get(e.penID) != e.pen {
		e.penID = e.intern(e.pen)
	}
}

// hardReset handles RIS. vt10x's reset forgets it is on the alternate
// screen without switching back, so leave it first.
func (e *VT10x) hardReset() {
	e.flush()
	e.usePen(0)
	if e.term.Mode()&vt10x.ModeAltScreen != 0 {
		e.out = append(e.out, "\x1b[?1047l"...)
	}
	e.out = append(e.out, "\x1bc"...)
	e.flush()
	e.pen, e.penID, e.vtPen = Style{}, 0, 0
	e.saved = savedState{}
	e.hidden = nil
	e.g, e.shift, e.lastRune = [2]bool{}, 0, -1
	e.insert, e.bracketed, e.origin, e.noWrap = false, false, false, false
	e.mouseEnc = MouseEncDefault
	e.top, e.bottom = 0, e.rows-1
}

// strDispatch handles a complete OSC/DCS/APC/PM/SOS string. Only titles
// are used; colour-setting OSCs are kept away from vt10x because its
// colour overrides would remap our style ids.
func (e *VT10x) strDispatch() {
	ps := &e.p
	if ps.strType != ']' {
		return
	}
	s := ps.str
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == len(s) || s[i] != ';' {
		return
	}
	switch string(s[:i]) {
	case "0", "2":
		e.title = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return -1
			}
			return r
		}, strings.ToValidUTF8(string(s[i+1:]), "\uFFFD"))
	}
}
