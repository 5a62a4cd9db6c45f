package ui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"sandtop/testwait"
)

// Below a width the detail pane goes under the lists, full width; above
// it, it stands beside them at least minDetailWidth wide. Either way the
// screen is exactly the terminal's size.
func TestNarrowScreensStackTheDetailPane(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {97, 30}, {98, 30}, {120, 40}, {160, 48}} {
		w, h := size[0], size[1]
		m, _ := newTestModel(t, w, h)
		l := m.lay
		if l.stacked {
			if l.detail.w != w || l.detail.y <= l.terms.y || l.tree.w != w {
				t.Errorf("%dx%d stacked: tree %+v terms %+v detail %+v", w, h, l.tree, l.terms, l.detail)
			}
		} else if l.detail.w < minDetailWidth {
			t.Errorf("%dx%d: detail pane beside the lists is %d wide", w, h, l.detail.w)
		}
		if w == 80 && !l.stacked {
			t.Errorf("80x24 is not stacked: detail %+v", l.detail)
		}
		lines := strings.Split(viewOf(m), "\n")
		if len(lines) != h {
			t.Errorf("%dx%d: %d lines drawn", w, h, len(lines))
		}
		for i, line := range lines {
			if ansi.StringWidth(line) != w {
				t.Errorf("%dx%d: line %d is %d wide: %q", w, h, i, ansi.StringWidth(line), line)
				break
			}
		}
	}
}

// At 80x24 the stacked pane is too low for a shell: a new terminal is
// 80x24, attaching zooms the pane, and the remote follows the zoomed pane.
func TestNewTerminalOnASmallScreenIsUsable(t *testing.T) {
	m, src := newTestModel(t, 80, 24)
	press(t, m, "t", "enter")
	src.mu.Lock()
	sizes := src.termSizes
	src.mu.Unlock()
	if len(sizes) != 1 || sizes[0] != [2]int{24, 80} {
		t.Fatalf("terminal spawned at %v (rows, cols), want 24x80", sizes)
	}
	if m.focus != focusAttached || !m.zoomed {
		t.Fatalf("new terminal not attached zoomed (focus %v zoomed %v)", m.focus, m.zoomed)
	}
	conn := src.conn(m.detail.pid)
	testwait.For(t, waitBound, "a usable remote size", func() bool { r := conn.lastResize(); return r[0] >= 10 && r[1] >= 38 })
}

// Detaching gives the remote terminal back the size it had, unless the
// operator keeps sandtop's.
func TestDetachRestoresTheTerminalSize(t *testing.T) {
	for _, keep := range []bool{false, true} {
		m, src := newTestModel(t, 160, 45, func(o *Options) { o.KeepTerminalSize = keep })
		press(t, m, "tab", "enter") // terminal 4600, 78x40: larger than the pane, so it zooms
		conn := src.conn(4600)
		w, h := m.detailInner()
		testwait.For(t, waitBound, "the attach's resize", func() bool { return conn.lastResize() == [2]int{h, w} })
		press(t, m, "ctrl+]")
		want := [2]int{40, 78}
		if keep {
			want = [2]int{h, w}
		}
		testwait.For(t, waitBound, "the size after detach", func() bool { return conn.lastResize() == want })
		if keep {
			continue
		}
		if cols, rows := m.detail.term.size(); cols != 78 || rows != 40 {
			t.Fatalf("the viewing emulator is %dx%d after detach, want 78x40", cols, rows)
		}
	}
}

// How a finished group ended is on screen at 80 columns: in EXIT where it
// fits, in the state where it does not.
func TestExitIsVisibleAt80Columns(t *testing.T) {
	m, _ := newTestModel(t, 80, 24)
	for range 10 {
		if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4500 {
			break
		}
		press(t, m, "down")
	}
	for _, line := range strings.Split(viewOf(m), "\n") {
		if strings.Contains(line, "4500") {
			if !strings.Contains(line, "exited 2") {
				t.Fatalf("the finished group's row does not say how it ended: %q", line)
			}
			return
		}
	}
	t.Fatalf("row 4500 not on screen:\n%s", viewOf(m))
}
