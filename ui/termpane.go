package ui

import (
	"io"
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

// renderScreen draws a screen as h lines of w cells with SGR styling
// (vt's renderer: wide characters at the edge, reverse video and overline
// included). The cursor is a reverse-video cell when showCursor is set.
func renderScreen(s *vt.Screen, w, h int, showCursor bool) []string {
	return strings.Split(vt.RenderANSI(s, vt.ANSIOptions{Width: w, Height: h, Cursor: showCursor}), "\n")
}
