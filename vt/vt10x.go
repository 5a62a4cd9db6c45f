package vt

import (
	"fmt"
	"io"

	"github.com/hinshun/vt10x"
)

// NewVT10x returns an Emulator built on github.com/hinshun/vt10x.
//
// vt10x never sees the raw stream. A small parser in front of it decodes
// UTF-8 (carrying partial characters between writes), keeps the SGR state
// itself, and hands vt10x a cleaned stream: every style is interned and
// passed down as a 24-bit colour that serves as the style's ID, so bold,
// reverse and colours come back exactly as the program set them. The same
// parser rewrites or answers the sequences vt10x gets wrong; the
// conformance test lists them.
//
// If vt10x ever panics the adapter recovers, starts over with a blank
// screen of the same size and counts the event in Recovered.
func NewVT10x(cols, rows int) *VT10x {
	if cols < 1 {
		cols = 80
	}
	if rows < 1 {
		rows = 24
	}
	e := &VT10x{cols: cols, rows: rows}
	e.resp = &responder{}
	e.styleLimit = 1 << 16
	e.start()
	return e
}

// VT10x is the vt10x adapter. See NewVT10x.
type VT10x struct {
	term       vt10x.Terminal
	cols, rows int
	resp       *responder
	out        []byte // cleaned bytes not yet given to vt10x

	p parser // byte-level state machine

	pen        Style  // SGR state as the program set it
	penID      uint32 // interned id of pen
	vtPen      uint32 // id vt10x currently applies; noPen if unknown
	saved      savedState
	styles     *styleTable
	styleLimit int
	hidden     map[uint32]struct{} // ids on the screen that is not shown

	g        [2]bool // G0/G1 designated as DEC graphics
	shift    int     // 0: G0 active (SI), 1: G1 active (SO)
	lastRune rune    // last printed character, for REP; -1 if none

	insert, bracketed, origin, noWrap bool
	mouseEnc                          MouseEncoding
	top, bottom                       int // scroll margins
	title                             string

	recovered int
}

// savedState is what DECSC saves besides the cursor position, which vt10x
// keeps itself.
type savedState struct {
	pen    Style
	penID  uint32
	vtPen  uint32
	g      [2]bool
	shift  int
	origin bool
}

const noPen = ^uint32(0)

// wideTail fills the right half of a wide character inside vt10x. It is a
// noncharacter, so no program can print it (we turn it into U+FFFD).
const wideTail = '\uffff'

func (e *VT10x) start() {
	e.term = vt10x.New(vt10x.WithSize(e.cols, e.rows), vt10x.WithWriter(e.resp))
	e.p = parser{}
	e.out = e.out[:0]
	e.pen, e.penID, e.vtPen = Style{}, 0, 0
	e.saved = savedState{}
	e.styles = newStyleTable(e.styleLimit)
	e.hidden = nil
	e.g, e.shift, e.lastRune = [2]bool{}, 0, -1
	e.insert, e.bracketed, e.origin, e.noWrap = false, false, false, false
	e.mouseEnc = MouseEncDefault
	e.top, e.bottom = 0, e.rows-1
}

// Write feeds program output. It always returns len(p), nil.
func (e *VT10x) Write(p []byte) (n int, err error) {
	defer func() {
		if r := recover(); r != nil {
			e.recoverFrom(r)
			n, err = len(p), nil
		}
	}()
	e.feed(p)
	e.flush()
	return len(p), nil
}

// recoverFrom resets the emulator after a panic inside vt10x or the
// adapter; the screen is lost but the title and size are kept.
func (e *VT10x) recoverFrom(r any) {
	e.recovered++
	title := e.title
	e.start()
	e.title = title
	_ = fmt.Sprint(r) // keep the value alive for debuggers
}

// Recovered returns how many times a panic was recovered.
func (e *VT10x) Recovered() int { return e.recovered }

// SetResponseWriter implements Emulator.
func (e *VT10x) SetResponseWriter(w io.Writer) { e.resp.w = w }

// responder forwards vt10x's and our replies to the current writer.
type responder struct{ w io.Writer }

func (r *responder) Write(p []byte) (int, error) {
	if r.w != nil {
		_, _ = r.w.Write(p)
	}
	return len(p), nil
}

func (e *VT10x) reply(s string) { _, _ = e.resp.Write([]byte(s)) }

// flush hands the pending cleaned bytes to vt10x.
func (e *VT10x) flush() {
	if len(e.out) > 0 {
		_, _ = e.term.Write(e.out)
		e.out = e.out[:0]
	}
}

// Size implements Emulator.
func (e *VT10x) Size() (int, int) { return e.cols, e.rows }

// Title implements Emulator.
func (e *VT10x) Title() string { return e.title }

// Cursor implements Emulator.
func (e *VT10x) Cursor() Cursor {
	c := e.term.Cursor()
	return Cursor{X: c.X, Y: c.Y, Visible: e.term.CursorVisible()}
}

// Modes implements Emulator.
func (e *VT10x) Modes() Modes {
	m := e.term.Mode()
	md := Modes{
		AltScreen:      m&vt10x.ModeAltScreen != 0,
		BracketedPaste: e.bracketed,
		AppCursorKeys:  m&vt10x.ModeAppCursor != 0,
		AppKeypad:      m&vt10x.ModeAppKeypad != 0,
		Insert:         e.insert,
		ReverseVideo:   m&vt10x.ModeReverse != 0,
		FocusEvents:    m&vt10x.ModeFocus != 0,
		MouseEncoding:  e.mouseEnc,
	}
	switch {
	case m&vt10x.ModeMouseX10 != 0:
		md.Mouse = MouseX10
	case m&vt10x.ModeMouseButton != 0:
		md.Mouse = MouseNormal
	case m&vt10x.ModeMouseMotion != 0:
		md.Mouse = MouseButton
	case m&vt10x.ModeMouseMany != 0:
		md.Mouse = MouseAny
	}
	return md
}

// Cell implements Emulator.
func (e *VT10x) Cell(x, y int) Cell {
	if x < 0 || y < 0 || x >= e.cols || y >= e.rows {
		return blankCell
	}
	return e.cellAt(x, y)
}

func (e *VT10x) cellAt(x, y int) Cell {
	g := e.term.Cell(x, y)
	c := Cell{Rune: g.Char, Width: 1, Style: e.styles.get(styleID(g.FG))}
	switch {
	case g.Char == wideTail:
		// A right half is only valid behind a wide left half.
		if x > 0 && runeWidth(e.term.Cell(x-1, y).Char) == 2 {
			c.Rune, c.Width = 0, 0
		} else {
			c.Rune = ' '
		}
	case g.Char < ' ':
		c.Rune = ' '
	case g.Char >= 0x1100 && runeWidth(g.Char) == 2:
		// A wide left half whose right half was overwritten is gone.
		if x+1 < e.cols && e.term.Cell(x+1, y).Char == wideTail {
			c.Width = 2
		} else {
			c.Rune = ' '
		}
	}
	return c
}

// copyCells fills dst (row-major) with the whole screen; Capture uses it.
func (e *VT10x) copyCells(dst []Cell) {
	for y := 0; y < e.rows; y++ {
		for x := 0; x < e.cols; x++ {
			dst[y*e.cols+x] = e.cellAt(x, y)
		}
	}
}

// styleID decodes the style id from a vt10x foreground colour.
func styleID(c vt10x.Color) uint32 {
	if c <= maxStyleID {
		return uint32(c)
	}
	return 0 // vt10x.DefaultFG and friends
}

// Resize implements Emulator. New cells are blank with the default style
// (vt10x would paint them with the current pen), and tab stops are set
// every 8 columns in a widened area (vt10x leaves none there).
func (e *VT10x) Resize(cols, rows int) {
	defer func() {
		if r := recover(); r != nil {
			e.recoverFrom(r)
		}
	}()
	if cols < 1 || rows < 1 || (cols == e.cols && rows == e.rows) {
		return
	}
	e.flush()
	e.usePen(0)
	e.flush()
	oldCols := e.cols
	e.term.Resize(cols, rows)
	e.cols, e.rows = cols, rows
	e.top, e.bottom = 0, rows-1
	if cols > oldCols {
		x0 := e.term.Cursor().X
		for x := (oldCols + 7) / 8 * 8; x < cols; x += 8 {
			e.out = fmt.Appendf(e.out, "\x1b[%dG\x1bH", x+1)
		}
		e.out = fmt.Appendf(e.out, "\x1b[%dG", x0+1)
	}
	e.flush()
}
