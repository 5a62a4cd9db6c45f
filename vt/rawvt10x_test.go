package vt

import (
	"bytes"
	"io"
	"testing"

	"github.com/hinshun/vt10x"
)

// rawVT10x exposes vt10x with no pre-parser, decoding its cells the naive
// way. It exists to show that every row marked fix in the conformance
// table fails without the adapter.
type rawVT10x struct {
	t    vt10x.Terminal
	resp *responder
}

func newRawVT10x(c, r int) *rawVT10x {
	resp := &responder{}
	return &rawVT10x{t: vt10x.New(vt10x.WithSize(c, r), vt10x.WithWriter(resp)), resp: resp}
}

func (r *rawVT10x) Write(p []byte) (int, error)   { return r.t.Write(p) }
func (r *rawVT10x) Resize(c, rows int)            { r.t.Resize(c, rows) }
func (r *rawVT10x) Size() (int, int)              { return r.t.Size() }
func (r *rawVT10x) Title() string                 { return r.t.Title() }
func (r *rawVT10x) SetResponseWriter(w io.Writer) { r.resp.w = w }
func (r *rawVT10x) Cursor() Cursor {
	c := r.t.Cursor()
	return Cursor{X: c.X, Y: c.Y, Visible: r.t.CursorVisible()}
}

func (r *rawVT10x) Modes() Modes {
	m := r.t.Mode()
	md := Modes{AltScreen: m&vt10x.ModeAltScreen != 0, AppCursorKeys: m&vt10x.ModeAppCursor != 0,
		AppKeypad: m&vt10x.ModeAppKeypad != 0, FocusEvents: m&vt10x.ModeFocus != 0, Insert: m&vt10x.ModeInsert != 0}
	switch {
	case m&vt10x.ModeMouseButton != 0:
		md.Mouse = MouseNormal
	case m&vt10x.ModeMouseMotion != 0:
		md.Mouse = MouseButton
	case m&vt10x.ModeMouseMany != 0:
		md.Mouse = MouseAny
	}
	if m&vt10x.ModeMouseSgr != 0 {
		md.MouseEncoding = MouseEncSGR
	}
	return md
}

func rawColor(c vt10x.Color) Color {
	switch {
	case c < 256:
		return Indexed(uint8(c))
	case c < 1<<24:
		return RGB(uint8(c>>16), uint8(c>>8), uint8(c))
	}
	return DefaultColor
}

func (r *rawVT10x) Cell(x, y int) Cell {
	c, rows := r.t.Size()
	if x < 0 || y < 0 || x >= c || y >= rows {
		return blankCell
	}
	g := r.t.Cell(x, y)
	cell := Cell{Rune: g.Char, Width: 1, Style: Style{FG: rawColor(g.FG), BG: rawColor(g.BG)}}
	bits := map[int16]Attr{1: AttrReverse, 2: AttrUnderline, 4: AttrBold, 16: AttrItalic, 32: AttrBlink}
	for b, a := range bits {
		if g.Mode&b != 0 {
			cell.Attr |= a
		}
	}
	if cell.Rune == 0 {
		cell.Rune = ' '
	}
	return cell
}

// TestConformanceFixesAreNeeded checks the table itself: each row marked
// fix must fail on bare vt10x, or the fix (and the claim in the README)
// is not real.
func TestConformanceFixesAreNeeded(t *testing.T) {
	for _, tc := range conformance {
		if !tc.fix {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			e := newRawVT10x(tc.cols, tc.rows)
			var reply bytes.Buffer
			e.SetResponseWriter(&reply)
			var short bool
			for _, s := range tc.in {
				switch s := s.(type) {
				case string:
					if n, _ := e.Write([]byte(s)); n != len(s) {
						short = true
					}
				case resize:
					e.Resize(s.cols, s.rows)
				}
			}
			if !short && len(checkCase(e, &tc, reply.String())) == 0 {
				t.Errorf("bare vt10x passes %q; it should not be marked fix", tc.name)
			}
		})
	}
}
