package vt

import (
	"fmt"
	"testing"
)

func numberedLines(term *Term, from, to int) {
	for i := from; i < to; i++ {
		_, _ = term.Write([]byte(fmt.Sprintf("line %d\r\n", i)))
	}
}

func TestPaneScrollPinAndFollow(t *testing.T) {
	term := NewTerm(12, 5, TermOptions{})
	defer term.Close()
	numberedLines(term, 0, 100)
	waitCaughtUp(t, term)
	p := NewPane(term)
	if got := p.Screen().Line(0); got != "line 96" {
		t.Fatalf("live top = %q", got)
	}
	p.ScrollUp(3)
	if p.Following() || p.Offset() != 3 {
		t.Fatalf("following=%v offset=%d", p.Following(), p.Offset())
	}
	scr := p.Screen()
	for y := 0; y < 5; y++ {
		if want := fmt.Sprintf("line %d", 93+y); scr.Line(y) != want {
			t.Fatalf("row %d = %q, want %q", y, scr.Line(y), want)
		}
	}
	numberedLines(term, 100, 120) // new output must not move a pinned view
	waitCaughtUp(t, term)
	if got := p.Screen().Line(0); got != "line 93" {
		t.Fatalf("pinned view moved: top = %q", got)
	}
	p.ScrollUp(1000)
	if got := p.Screen().Line(0); got != "line 0" {
		t.Fatalf("top of history = %q", got)
	}
	p.ScrollDown(1)
	if got := p.Screen().Line(0); got != "line 1" {
		t.Fatalf("after scrolling down = %q", got)
	}
	p.End()
	if !p.Following() || p.Screen().Line(0) != "line 116" {
		t.Fatalf("after End: following=%v top=%q", p.Following(), p.Screen().Line(0))
	}
}

func TestPaneNoHistoryOnAltScreen(t *testing.T) {
	term := NewTerm(12, 5, TermOptions{})
	defer term.Close()
	numberedLines(term, 0, 50)
	_, _ = term.Write([]byte("\x1b[?1049h\x1b[Hfull screen"))
	waitCaughtUp(t, term)
	p := NewPane(term)
	p.ScrollUp(5)
	if !p.Following() || p.Screen().Line(0) != "full screen" {
		t.Fatalf("alt screen scrolled: following=%v top=%q", p.Following(), p.Screen().Line(0))
	}
}
