package ui

import (
	"io"
	"strconv"
	"strings"
	"sync"

	"sandtop/vt"
)

// termPane is a remote terminal's screen: a vt.Term parsing on its own
// goroutine, plus the routing of the emulator's query answers back to the
// program while attached.
type termPane struct {
	term    *vt.Term
	replies *replyRouter
	stop    chan struct{}
	once    sync.Once
}

// newTermPane makes a pane whose raw scrollback ring holds scrollback
// bytes (0: vt's default).
func newTermPane(cols, rows, scrollback int) *termPane {
	t := &termPane{term: vt.NewTerm(cols, rows, vt.TermOptions{Scrollback: scrollback}), replies: &replyRouter{}, stop: make(chan struct{})}
	t.term.SetResponseWriter(t.replies)
	return t
}

// relayChanges wakes the frame loop whenever the screen changed.
func (t *termPane) relayChanges(wake chan<- struct{}) {
	go func() {
		for {
			select {
			case <-t.term.Changed():
				select {
				case wake <- struct{}{}:
				default:
				}
			case <-t.stop:
				return
			}
		}
	}()
}

func (t *termPane) close() {
	if t == nil {
		return
	}
	t.once.Do(func() {
		close(t.stop)
		_ = t.term.Close()
	})
}

func (t *termPane) resize(cols, rows int) {
	if t != nil && cols > 0 && rows > 0 {
		t.term.Resize(cols, rows)
	}
}

func (t *termPane) size() (cols, rows int) { return t.term.Size() }

// modes tells the key encoder how the program wants keys and pastes.
func (t *termPane) modes() InputModes {
	if t == nil {
		return InputModes{}
	}
	md := t.term.Snapshot().Modes
	return InputModes{AppCursorKeys: md.AppCursorKeys, BracketedPaste: md.BracketedPaste}
}

// replyRouter sends the emulator's answers (cursor position, device
// attributes) to the program only while input is allowed.
type replyRouter struct {
	mu sync.Mutex
	to *inputQueue
}

func (r *replyRouter) set(q *inputQueue) {
	r.mu.Lock()
	r.to = q
	r.mu.Unlock()
}

func (r *replyRouter) Write(p []byte) (int, error) {
	r.mu.Lock()
	q := r.to
	r.mu.Unlock()
	if q != nil {
		q.send(append([]byte(nil), p...))
	}
	return len(p), nil
}

var _ io.Writer = (*replyRouter)(nil)

// renderScreen draws a screen as h lines of w cells with SGR styling. ANSI
// colours stay palette indexes, so the outer terminal (or the PNG renderer
// with the theme's palette) decides what they look like. The cursor is
// drawn as a reverse-video cell when showCursor is set.
func renderScreen(s *vt.Screen, w, h int, showCursor bool) []string {
	lines := make([]string, 0, h)
	var b strings.Builder
	for y := 0; y < h; y++ {
		b.Reset()
		cur := vt.Style{}
		for x := 0; x < w; x++ {
			if x >= s.Cols || y >= s.Rows {
				if cur != (vt.Style{}) {
					b.WriteString("\x1b[0m")
					cur = vt.Style{}
				}
				b.WriteByte(' ')
				continue
			}
			c := s.Cell(x, y)
			if c.Width == 0 {
				continue
			}
			st := c.Style
			if showCursor && s.Cursor.Visible && s.Cursor.X == x && s.Cursor.Y == y {
				st.Attr ^= vt.AttrReverse
			}
			if st != cur {
				writeSGR(&b, st)
				cur = st
			}
			r := c.Rune
			if r == 0 || r < ' ' {
				r = ' '
			}
			b.WriteRune(r)
		}
		if cur != (vt.Style{}) {
			b.WriteString("\x1b[0m")
		}
		lines = append(lines, b.String())
	}
	return lines
}

func writeSGR(b *strings.Builder, st vt.Style) {
	b.WriteString("\x1b[0")
	attrs := []struct {
		a    vt.Attr
		code string
	}{{vt.AttrBold, "1"}, {vt.AttrFaint, "2"}, {vt.AttrItalic, "3"}, {vt.AttrUnderline, "4"},
		{vt.AttrBlink, "5"}, {vt.AttrReverse, "7"}, {vt.AttrInvisible, "8"}, {vt.AttrStrike, "9"}}
	for _, a := range attrs {
		if st.Attr&a.a != 0 {
			b.WriteByte(';')
			b.WriteString(a.code)
		}
	}
	writeColor(b, st.FG, 30)
	writeColor(b, st.BG, 40)
	b.WriteByte('m')
}

func writeColor(b *strings.Builder, c vt.Color, base int) {
	switch c.Kind() {
	case vt.KindANSI:
		i := int(c.Index())
		if i < 8 {
			b.WriteString(";" + strconv.Itoa(base+i))
		} else {
			b.WriteString(";" + strconv.Itoa(base+60+i-8))
		}
	case vt.KindPalette:
		b.WriteString(";" + strconv.Itoa(base+8) + ";5;" + strconv.Itoa(int(c.Index())))
	case vt.KindTrueColor:
		r, g, bl := c.RGB()
		b.WriteString(";" + strconv.Itoa(base+8) + ";2;" + strconv.Itoa(int(r)) + ";" + strconv.Itoa(int(g)) + ";" + strconv.Itoa(int(bl)))
	}
}
