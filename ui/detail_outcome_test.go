package ui

import (
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"strings"
	"testing"
)

// A group torn down while its output is on screen at 80x24 keeps that
// output: the pane does not reopen on the finished group (whose leader,
// the outer half of a wrapper here, the table no longer names), and the
// teardown's steps and how the group ended follow the output.
func TestTeardownOutcomeFollowsTheOutput(t *testing.T) {
	m, src := newTestModel(t, 80, 24)
	live := demoSnapshot(testNow)
	for i := range live.Groups {
		if g := &live.Groups[i]; g.PGID == 4123 {
			g.LeaderPID = 4122
		}
	}
	m.Update(snapshotMsg{gen: 0, snap: live, ch: src.snaps})
	src.outputs[4122] = "serving on :8080\nbye\n"
	for range 20 {
		if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4123 {
			break
		}
		press(t, m, "down")
	}
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4123 {
		t.Fatal("could not select group 4123")
	}
	testwait.For(t, waitBound, "the output to end", func() bool { m.drainStreams(); return m.detail.ended })
	reader := m.detail.reader
	press(t, m, "x", "y")

	snap := demoSnapshot(testNow)
	for i := range snap.Groups {
		if g := &snap.Groups[i]; g.PGID == 4123 {
			g.State, g.Members, g.LeaderPID = groupstate.Settled, nil, 0
			g.Exit = &sandbox.Exit{Code: 143, Signal: "SIGTERM"}
			g.StateDir = "/run/sandtop/groups/4123"
		}
	}
	m.Update(snapshotMsg{gen: 0, snap: snap, ch: src.snaps})
	if m.detail.reader != reader {
		t.Fatal("the pane reopened on the finished group instead of keeping its output")
	}
	view := viewOf(m)
	if !inOrder(view, "Output · pgid 4123", "serving on :8080", "bye",
		"teardown: SIGTERM to 1 member", "teardown: group empty", "── killed by SIGTERM ──") {
		t.Fatalf("want the output, then the teardown's steps, then how it ended:\n%s", view)
	}
	if strings.Contains(view, "It kept no output") {
		t.Fatalf("the pane says nothing was kept under output it shows:\n%s", view)
	}
}
