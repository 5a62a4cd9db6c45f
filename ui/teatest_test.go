package ui

import (
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"sandtop/themes"
	"sandtop/ui/screentest"
)

// flow is a model running in a real Bubble Tea program loop, with its
// screen. Each flow has a program, model and source of its own: the flow
// tests run side by side.
type flow struct {
	*teatest.TestModel
	scr *screentest.Screen
}

// startProgram runs the model in a real Bubble Tea program loop.
func startProgram(t *testing.T, readOnly bool) (*flow, *fakeSource) {
	t.Helper()
	src := newFakeSource()
	src.snaps <- demoSnapshot(testNow)
	m := NewModel(Options{Source: src, Theme: themes.MustLoad("dark"), ReadOnly: readOnly, Now: func() time.Time { return testNow }})
	t.Cleanup(m.Close)
	tm := &flow{TestModel: teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 50))}
	tm.scr = screentest.New(tm.Output(), 160, 50)
	want := "sleep 600"
	if readOnly {
		want = "READ-ONLY"
	}
	waitScreen(t, tm, want)
	return tm, src
}

func waitScreen(t *testing.T, tm *flow, want ...string) {
	t.Helper()
	tm.scr.Wait(t, waitBound, want...)
}

func send(tm *flow, keys ...string) {
	for _, k := range keys {
		tm.Send(keyMsg(k))
	}
}

func finish(t *testing.T, tm *flow) *Model {
	t.Helper()
	tm.Send(keyMsg("q"))
	return tm.FinalModel(t, teatest.WithFinalTimeout(waitBound)).(*Model)
}

func TestFlowFilter(t *testing.T) {
	t.Parallel()
	tm, _ := startProgram(t, false)
	send(tm, "/")
	tm.Type("python")
	waitScreen(t, tm, "filter python")
	send(tm, "enter")
	m := finish(t, tm)
	if m.cur.tree.filter != "python" || len(m.cur.tree.rows) != 1 {
		t.Fatalf("filter = %q, rows = %d", m.cur.tree.filter, len(m.cur.tree.rows))
	}
}

func TestFlowMarkConfirmBulkTeardown(t *testing.T) {
	t.Parallel()
	tm, src := startProgram(t, false)
	send(tm, "j", "space", "space")
	waitScreen(t, tm, "2 marked")
	send(tm, "X")
	waitScreen(t, tm, "Bulk teardown")
	tm.Type("2")
	send(tm, "enter")
	waitScreen(t, tm, "pgid 4100 empty", "pgid 4123 empty")
	// Not "q": until each teardown's done message has been handled (it
	// follows its "empty" progress), q rightly asks before quitting.
	tm.Send(tea.QuitMsg{})
	m := tm.FinalModel(t, teatest.WithFinalTimeout(waitBound)).(*Model)
	if _, _, tds := src.calls(); len(tds) != 2 {
		t.Fatalf("teardowns = %v", tds)
	}
	for _, pgid := range []int{4100, 4123} {
		if td := m.cur.teardowns[pgid]; td == nil || td.phase != TeardownEmpty {
			t.Fatalf("teardown of %d: %+v", pgid, td)
		}
	}
}

func TestFlowCancelSendsNothing(t *testing.T) {
	t.Parallel()
	tm, src := startProgram(t, false)
	send(tm, "j", "s")
	waitScreen(t, tm, "Send signal")
	send(tm, "enter")
	waitScreen(t, tm, "Send SIGTERM?")
	send(tm, "n")
	waitScreen(t, tm, "cancelled")
	send(tm, "x")
	waitScreen(t, tm, "Tear down group?")
	send(tm, "esc")
	finish(t, tm)
	if _, sigs, tds := src.calls(); len(sigs)+len(tds) != 0 {
		t.Fatalf("cancel let through signals %v teardowns %v", sigs, tds)
	}
}

func TestFlowConfirmSignal(t *testing.T) {
	t.Parallel()
	tm, src := startProgram(t, false)
	send(tm, "j", "s", "enter")
	waitScreen(t, tm, "Send SIGTERM?")
	send(tm, "y")
	waitScreen(t, tm, "SIGTERM sent to pgid 4100")
	finish(t, tm)
	if _, sigs, _ := src.calls(); len(sigs) != 1 {
		t.Fatalf("signals = %v", sigs)
	}
}

func TestFlowReadOnlyRefusal(t *testing.T) {
	t.Parallel()
	tm, src := startProgram(t, true) // its first screen already showed READ-ONLY
	send(tm, "j", "x")
	waitScreen(t, tm, "read-only: teardown refused")
	send(tm, "s")
	waitScreen(t, tm, "read-only: signal refused")
	finish(t, tm)
	if spawns, sigs, tds := src.calls(); len(spawns)+len(sigs)+len(tds) != 0 {
		t.Fatalf("read-only let mutations through")
	}
}
