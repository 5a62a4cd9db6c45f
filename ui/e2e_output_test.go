package ui

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// TestOutputPaneInTmux: a group prints tabs, colours, a bell and a
// 500-column line. In a real terminal every row of the screen stays inside
// the window with its borders where they belong, the colours show, and the
// long line can be scrolled sideways and wrapped.
func TestOutputPaneInTmux(t *testing.T) {
	e := newE2E(t)
	e.serve("d.sock")
	const w, h = 160, 45
	tm := e.tuiSized("out", w, h, "--socket", "d.sock")
	tm.wait("the TUI connected", "● connected")
	// The sleep's argument is this binary's own, so that no other run on
	// the machine shares it.
	sleep := fmt.Sprint(200000 + os.Getpid())
	script := `printf 'a\tb\tc\n\033[31mRED\033[0m plain\a\n'; printf S; printf '%0498d' 0 | tr 0 x; printf 'E\n'; exec sleep ` + sleep
	t.Cleanup(func() { killByCmdline(t, "sleep\x00"+sleep) })
	e.sandtop("--socket", "d.sock", "run", "--tag", "e2e-out", "--", "bash", "-c", script)
	tm.keys("/")
	tm.text("e2e-out")
	tm.keys("Enter")
	tm.waitFunc("the group listed", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "running") && strings.Contains(l, "e2e-out") {
				return true
			}
		}
		return false
	})
	tm.keys("G")
	tm.wait("the group selected", "Output · pgid")
	tm.keys("Enter")
	tm.wait("tabs expanded to the next stop", "a       b       c")

	intact := func(screen string) {
		t.Helper()
		rows := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		if len(rows) != h || !strings.HasPrefix(rows[0], " sandtop") || !strings.Contains(rows[h-1], "? help") {
			t.Fatalf("the screen scrolled or lost its header or footer:\n%s", screen)
		}
		for i, r := range rows {
			if ansi.StringWidth(r) > w {
				t.Fatalf("row %d is wider than the window:\n%s", i, screen)
			}
			if i > 0 && i < h-1 && !strings.ContainsAny(r[:3], "╭│╰") {
				t.Fatalf("row %d lost its left border:\n%s", i, screen)
			}
			if i > 0 && i < h-1 && !strings.HasSuffix(strings.TrimRight(r, " "), "│") && !strings.HasSuffix(strings.TrimRight(r, " "), "╮") && !strings.HasSuffix(strings.TrimRight(r, " "), "╯") {
				t.Fatalf("row %d lost its right border:\n%s", i, screen)
			}
		}
	}
	tm.wait("the bell shown as a picture", "RED plain␇")
	tm.wait("the long line", "Sxxxx")
	screen := tm.screen()
	intact(screen)
	if strings.Contains(screen, "xE") {
		t.Fatalf("the long line is not cut:\n%s", screen)
	}
	if coloured := tm.run("capture-pane", "-p", "-e", "-t", tm.target); !strings.Contains(coloured, "\x1b[31mRED") {
		t.Fatalf("the program's red is lost:\n%q", coloured)
	}

	// Sideways: the end of the long line comes into view.
	tm.waitFunc("the long line scrolled to its end", func(s string) bool {
		if strings.Contains(s, "xE") {
			return true
		}
		tm.keys("l")
		return false
	})
	intact(tm.screen())

	// Wrapped: the start and the end are both on screen, on several rows.
	tm.keys("w")
	tm.waitFunc("the long line wrapped", func(s string) bool {
		return strings.Contains(s, "Sxxxx") && strings.Contains(s, "xE") && strings.Contains(s, "· wrap")
	})
	intact(tm.screen())
	tm.quit()
}
