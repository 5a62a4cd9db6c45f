package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// failures is a testing.TB that records Fatalf instead of stopping, so
// that run's own failures can be read.
type failures struct {
	testing.TB
	got []string
}

func (f *failures) Helper() {}

func (f *failures) Fatalf(format string, args ...any) {
	f.got = append(f.got, fmt.Sprintf(format, args...))
}

// A command that does not finish fails the test, named after the function
// that made it; it is not dropped.
func TestRunFailsOnACommandThatHangs(t *testing.T) {
	m, _ := newTestModel(t, 80, 24)
	f := &failures{TB: t}
	never := make(chan struct{})
	defer close(never)
	runWithin(f, m, tea.Batch(func() tea.Msg { <-never; return nil }), 20*time.Millisecond)
	if len(f.got) != 1 || !strings.Contains(f.got[0], "TestRunFailsOnACommandThatHangs") || !strings.Contains(f.got[0], "did not finish within 20ms") {
		t.Fatalf("failures %q, want one naming this test's closure", f.got)
	}
}

// The waits run leaves to the test are the ones it names, and a model
// that waits on the wall clock is told to use the test's timer.
func TestRunLeavesTheWatchAndRefusesTheWallClock(t *testing.T) {
	m, src := newTestModel(t, 80, 24)
	f := &failures{TB: t}
	runWithin(f, m, m.nextSnapshotCmd(m.cur, 0, src.snaps), 20*time.Millisecond)
	if len(f.got) != 0 {
		t.Fatalf("the watch was run: %q", f.got)
	}
	runWithin(f, m, tea.Tick(time.Hour, func(time.Time) tea.Msg { return nil }), 20*time.Millisecond)
	if len(f.got) != 1 || !strings.Contains(f.got[0], "Options.Tick = testTick") {
		t.Fatalf("failures %q, want one about the wall clock", f.got)
	}
}

// A timer the model sets fires at once, unless it is a clock that
// repeats: that one is the test's to deliver.
func TestRunFiresTimersButNotTheClock(t *testing.T) {
	m, _ := newTestModel(t, 80, 24)
	runWithin(t, m, testTick(time.Hour, func(time.Time) tea.Msg { return tea.WindowSizeMsg{Width: 100, Height: 30} }), time.Second)
	if m.width != 100 {
		t.Fatalf("a timer's message was not delivered: width %d", m.width)
	}
	m.status, m.statusUntil = "expired", testNow.Add(-time.Second) // the next clock tick clears it
	runWithin(t, m, m.clockCmd(time.Second), time.Second)
	if m.status != "expired" {
		t.Fatal("the clock's tick was delivered by run")
	}
	m.Update(clockMsg(testNow))
	if m.status != "" {
		t.Fatal("a tick the test delivers does not clear an expired status; the check above proves nothing")
	}
}
