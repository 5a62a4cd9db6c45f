package ui

import (
	"regexp"
	"strings"
	"testing"
)

// TestSmallScreenInTmux runs the built binary at 80x24: the detail pane is
// stacked full width under the lists, `t` makes a terminal of at least
// 38x10, and detaching gives it back its size unless --keep-term-size.
func TestSmallScreenInTmux(t *testing.T) {
	e := newE2E(t)
	e.serve("s.sock")
	sizeOf := regexp.MustCompile(`│›\d+\s.*?\s(\d+)x(\d+)\s`)
	for _, keep := range []bool{false, true} {
		args := []string{"--socket", "s.sock"}
		if keep {
			args = append(args, "--keep-term-size")
		}
		tm := e.tuiSized("small", 80, 24, args...)
		tm.wait("the TUI connected", "● connected")
		// The detail pane's box starts at the left edge, under the lists.
		tm.waitFunc("the detail pane stacked full width", func(s string) bool {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				if strings.HasPrefix(l, "╭─ Terminals") {
					for _, below := range lines[i+1:] {
						if strings.HasPrefix(below, "╭─") && !strings.HasPrefix(below, "╭─ Events") {
							return len([]rune(strings.TrimRight(below, " "))) == 80
						}
					}
				}
			}
			return false
		})
		tm.keys("t", "Enter")
		tm.wait("attached", "attached to terminal")
		tm.waitFunc("a terminal of at least 38x10", func(s string) bool {
			// Zoomed while attached: the pane's box is the screen's.
			return strings.Contains(s, "ctrl+] detach") && strings.Count(s, "\n") >= 22
		})
		tm.keys("C-]")
		tm.wait("detached", "detached from terminal")
		want := "80x24" // the size it was made with, given back
		if keep {
			want = "78x" // the zoomed pane's, kept
		}
		tm.waitFunc("the terminal's size after detach: "+want, func(s string) bool {
			m := sizeOf.FindStringSubmatch(s)
			return m != nil && strings.HasPrefix(m[1]+"x"+m[2], want)
		})
		if m := sizeOf.FindStringSubmatch(tm.screen()); m != nil && (atoi(m[1]) < 38 || atoi(m[2]) < 10) {
			t.Fatalf("terminal is %sx%s", m[1], m[2])
		}
		tm.quit()
	}
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}
