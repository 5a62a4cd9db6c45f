package vt

// Screen is an immutable copy of an emulator's visible state. Renderers
// work on Screens so that drawing never races with parsing.
type Screen struct {
	Cols, Rows int
	Cells      []Cell // row-major, len Cols*Rows
	Cursor     Cursor
	Modes      Modes
	Title      string
}

// Capture copies the visible state of e.
func Capture(e Emulator) *Screen {
	cols, rows := e.Size()
	s := &Screen{Cols: cols, Rows: rows, Cells: make([]Cell, cols*rows)}
	if c, ok := e.(interface{ copyCells([]Cell) }); ok {
		c.copyCells(s.Cells)
	} else {
		for y := 0; y < rows; y++ {
			for x := 0; x < cols; x++ {
				s.Cells[y*cols+x] = e.Cell(x, y)
			}
		}
	}
	s.Cursor = e.Cursor()
	s.Modes = e.Modes()
	s.Title = e.Title()
	return s
}

// NewScreen returns a blank screen.
func NewScreen(cols, rows int) *Screen {
	s := &Screen{Cols: cols, Rows: rows, Cells: make([]Cell, cols*rows), Cursor: Cursor{Visible: true}}
	for i := range s.Cells {
		s.Cells[i] = blankCell
	}
	return s
}

// Cell returns the cell at x, y, or a blank cell outside the screen.
func (s *Screen) Cell(x, y int) Cell {
	if x < 0 || y < 0 || x >= s.Cols || y >= s.Rows {
		return blankCell
	}
	return s.Cells[y*s.Cols+x]
}

// Line returns the text of row y with trailing blanks removed; the right
// halves of wide characters are skipped. It is meant for tests and logs.
func (s *Screen) Line(y int) string {
	var b []rune
	for x := 0; x < s.Cols; x++ {
		c := s.Cell(x, y)
		if c.Width == 0 {
			continue
		}
		b = append(b, c.Rune)
	}
	n := len(b)
	for n > 0 && b[n-1] == ' ' {
		n--
	}
	return string(b[:n])
}

// Text returns all rows joined by newlines, trailing blanks trimmed.
func (s *Screen) Text() string {
	var out []byte
	for y := 0; y < s.Rows; y++ {
		if y > 0 {
			out = append(out, '\n')
		}
		out = append(out, s.Line(y)...)
	}
	return string(out)
}

// Equal reports whether two screens show the same cells, cursor and modes.
func (s *Screen) Equal(o *Screen) bool {
	if s.Cols != o.Cols || s.Rows != o.Rows || s.Cursor != o.Cursor || s.Modes != o.Modes {
		return false
	}
	for i := range s.Cells {
		if s.Cells[i] != o.Cells[i] {
			return false
		}
	}
	return true
}
