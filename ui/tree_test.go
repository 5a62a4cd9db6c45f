package ui

import (
	"testing"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

func treeGroups(pgids ...int) []sandbox.Group {
	out := make([]sandbox.Group, 0, len(pgids))
	for _, p := range pgids {
		out = append(out, sandbox.Group{PGID: p, SID: p, LeaderPID: p, State: groupstate.Running, Origin: sandbox.OriginSandtop})
	}
	return out
}

func selectedPGID(t *treeState) int {
	if g := t.selectedGroup(); g != nil {
		return g.PGID
	}
	return 0
}

// A group that drops out of one snapshot (between its leader's exit and
// its published end) gets the cursor back when it returns, so the pane
// stays on it; once the operator moves, the cursor is theirs.
func TestCursorReturnsToAGroupThatMissedASnapshot(t *testing.T) {
	tr := newTreeState()
	tr.setGroups(treeGroups(100, 200, 300))
	tr.move(1)
	if got := selectedPGID(&tr); got != 200 {
		t.Fatalf("selected %d, want 200", got)
	}
	tr.setGroups(treeGroups(100, 300))
	if got := selectedPGID(&tr); got == 200 {
		t.Fatalf("a group not listed is selected")
	}
	tr.setGroups(treeGroups(100, 150, 200, 300))
	if got := selectedPGID(&tr); got != 200 {
		t.Fatalf("after the group came back the cursor is on %d, want 200", got)
	}

	tr.setGroups(treeGroups(100, 300))
	tr.move(-1) // the operator picks another row while 200 is away
	picked := selectedPGID(&tr)
	tr.setGroups(treeGroups(100, 200, 300))
	if got := selectedPGID(&tr); got != picked {
		t.Fatalf("the cursor jumped to %d after the operator picked %d", got, picked)
	}
}
