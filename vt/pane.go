package vt

// Pane is a view of a Term that can scroll back into history. While it
// follows (offset 0) it shows the live screen. Scrolling up replays the
// Scrollback into a tall emulator once and pins the view to that
// snapshot, so new output does not move what the user is reading; End
// follows the live screen again. A Pane is meant for one goroutine (the
// UI's); the Term it reads is safe to feed concurrently.
type Pane struct {
	term *Term
	// MaxHistoryRows bounds the tall emulator used for history (default
	// 2000 rows).
	MaxHistoryRows int

	offset  int
	hist    *Screen // pinned history; nil while following
	liveTop int     // row of hist that was the live screen's top row
}

// NewPane returns a Pane following t.
func NewPane(t *Term) *Pane { return &Pane{term: t, MaxHistoryRows: 2000} }

// Following reports whether the pane shows the live screen.
func (p *Pane) Following() bool { return p.offset == 0 }

// Offset returns how many rows the view is scrolled back.
func (p *Pane) Offset() int { return p.offset }

// End drops the pinned history and follows the live screen again.
func (p *Pane) End() {
	p.offset = 0
	p.hist = nil
}

// ScrollUp scrolls back n rows, as far as history goes. The first call
// after following replays the scrollback, which costs about as long as
// parsing the ring (roughly 0.1 s per MiB); run it off the UI loop if
// that matters. On the alternate screen there is no history to show.
func (p *Pane) ScrollUp(n int) {
	if p.hist == nil && !p.pin() {
		return
	}
	p.offset = min(p.offset+n, p.liveTop)
	if p.offset == 0 {
		p.hist = nil
	}
}

// ScrollDown scrolls towards the live screen; reaching it follows again.
func (p *Pane) ScrollDown(n int) {
	p.offset = max(p.offset-n, 0)
	if p.offset == 0 {
		p.End()
	}
}

// pin builds the history snapshot; it reports false if there is none.
func (p *Pane) pin() bool {
	live, parsed := p.term.snapshotAt()
	if live.Modes.AltScreen {
		return false
	}
	rows := max(p.MaxHistoryRows, live.Rows)
	tall := p.term.opt.New(live.Cols, rows)
	sb := p.term.Scrollback()
	buf := make([]byte, 0, 32<<10)
	for from := sb.SafeStart(); from < parsed; {
		next := min(from+32<<10, parsed)
		buf = sb.AppendRange(buf[:0], from, next)
		_, _ = tall.Write(buf)
		from = next
	}
	h := Capture(tall)
	top := h.Cursor.Y - live.Cursor.Y
	if top <= 0 {
		return false
	}
	p.hist, p.liveTop = h, top
	return true
}

// Screen returns what the pane shows: the live screen while following,
// otherwise the pinned history window (without a cursor).
func (p *Pane) Screen() *Screen {
	if p.hist == nil {
		return p.term.Snapshot()
	}
	cols, rows := p.term.Size()
	s := NewScreen(cols, rows)
	s.Cursor.Visible = false
	top := p.liveTop - p.offset
	for y := 0; y < rows; y++ {
		for x := 0; x < cols && x < p.hist.Cols; x++ {
			s.Cells[y*cols+x] = p.hist.Cell(x, top+y)
		}
	}
	return s
}
