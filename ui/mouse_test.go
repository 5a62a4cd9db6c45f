package ui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// With --mouse, the wheel moves the list under it and a click selects the
// row clicked; the view asks Bubble Tea for mouse reports only then.
func TestMouseWheelAndClick(t *testing.T) {
	m, _ := newTestModel(t, 160, 45, func(o *Options) { o.Mouse = true })
	if got := m.View().MouseMode; got != tea.MouseModeCellMotion {
		t.Fatalf("mouse mode = %v", got)
	}
	tree := m.lay.tree
	run(t, m, m.handleMouse(tea.MouseWheelMsg{X: tree.x + 5, Y: tree.y + 3, Button: tea.MouseWheelDown}))
	if m.cur.tree.cursor != 3 {
		t.Fatalf("wheel down moved the cursor to %d, want 3", m.cur.tree.cursor)
	}
	// Row 5 of the tree (after the border and the column header) is 4200.
	run(t, m, m.handleMouse(tea.MouseClickMsg{X: tree.x + 5, Y: tree.y + 2 + 4, Button: tea.MouseLeft}))
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4200 {
		t.Fatalf("click selected %+v, want 4200", g)
	}
	// A release or a right click selects nothing.
	run(t, m, m.handleMouse(tea.MouseReleaseMsg{X: tree.x + 5, Y: tree.y + 2, Button: tea.MouseLeft}))
	run(t, m, m.handleMouse(tea.MouseClickMsg{X: tree.x + 5, Y: tree.y + 2, Button: tea.MouseRight}))
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4200 {
		t.Fatalf("a release or right click moved the selection to %+v", g)
	}
	m2, _ := newTestModel(t, 160, 45)
	if got := m2.View().MouseMode; got != tea.MouseModeNone {
		t.Fatalf("mouse mode without --mouse = %v", got)
	}
}
