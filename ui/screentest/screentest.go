// Package screentest lets tests wait for what a Bubble Tea program's
// screen shows. The renderer sends only the cells that changed, moving the
// cursor between them, so the bytes of a phrase need not be contiguous in
// the output; run through a terminal emulator, they are on screen.
package screentest

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
	"sandtop/vt"
)

// Screen is a program's output as a terminal would show it.
type Screen struct {
	out io.Reader
	emu *vt.VT10x
}

// New follows out (a test program's output) on a cols×rows screen.
func New(out io.Reader, cols, rows int) *Screen {
	return &Screen{out: out, emu: vt.NewVT10x(cols, rows)}
}

// Text reads what output there is and returns the screen's text.
func (s *Screen) Text() string {
	b, _ := io.ReadAll(s.out)
	_, _ = s.emu.Write(onlcr(b))
	return vt.Capture(s.emu).Text()
}

// WaitFunc polls the screen until ok holds, failing the test after d
// with the last screen; it returns the screen that held.
func (s *Screen) WaitFunc(t testing.TB, what string, d time.Duration, ok func(screen string) bool) string {
	t.Helper()
	return testwait.Value(t, d, func() (string, error) {
		text := s.Text()
		if !ok(text) {
			return text, fmt.Errorf("screen never showed %s; last screen:\n%s", what, text)
		}
		return text, nil
	})
}

// Wait waits until every phrase in want is on screen.
func (s *Screen) Wait(t testing.TB, d time.Duration, want ...string) string {
	t.Helper()
	return s.WaitFunc(t, strings.Join(want, " and "), d, func(text string) bool {
		for _, w := range want {
			if !strings.Contains(text, w) {
				return false
			}
		}
		return true
	})
}

// onlcr does what a terminal's line discipline does to output by default
// (OPOST, ONLCR): a newline becomes carriage return and newline. A program
// with no terminal for input, as under test, is drawn by Bubble Tea on
// that assumption: it may end a row with a bare newline and expect the
// next row to start at the left edge.
func onlcr(b []byte) []byte {
	return bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))
}
