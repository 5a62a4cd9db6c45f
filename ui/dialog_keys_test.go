package ui

import (
	"fmt"
	"testing"

	"sandtop/testwait"
)

func TestDialogsFollowTheKeymap(t *testing.T) {
	m, _ := newTestModel(t, 160, 50, func(o *Options) { o.Keys = map[string][]string{"back": {"ctrl+g"}, "down": {"j", "ctrl+n"}} })
	press(t, m, "j", "s")
	if _, ok := m.dialog.(*signalMenu); !ok {
		t.Fatalf("no signal menu")
	}
	press(t, m, "ctrl+n")
	if d := m.dialog.(*signalMenu); d.cursor != 1 {
		t.Fatalf("rebound down did not move the menu: cursor %d", d.cursor)
	}
	press(t, m, "ctrl+g")
	if m.dialog != nil {
		t.Fatalf("rebound back did not close the menu")
	}
}

func TestPaletteCompletesWithTab(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	press(t, m, ":")
	typeText(t, m, "sig")
	press(t, m, "tab")
	typeText(t, m, " K")
	press(t, m, "tab")
	if got := m.dialog.(*palette).input.Value(); got != "signal KILL" {
		t.Fatalf("completed to %q", got)
	}
}

// TestAttachZoomsANarrowPane: the terminal (78 columns) is wider than the
// detail pane, so attaching zooms the pane instead of shrinking it, and
// detaching gives the list its room back.
func TestAttachZoomsANarrowPane(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	if w, _ := m.detailInner(); w >= 78 {
		t.Fatalf("pane %d wide; the test needs one narrower than the terminal", w)
	}
	press(t, m, "tab", "enter")
	testwait.NoError(t, waitBound, func() error {
		if m.focus != focusAttached {
			return fmt.Errorf("focus is %s, not attached", m.focus)
		}
		return nil
	})
	if w, _ := m.detailInner(); !m.zoomed || w < 78 {
		t.Fatalf("attached in a narrow pane: zoomed %v, pane %d wide", m.zoomed, w)
	}
	press(t, m, "ctrl+]")
	if m.zoomed {
		t.Fatalf("detaching left the pane zoomed")
	}
}
