package seam

import (
	"path"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

// The seam's read side. Snapshot and Watch say what a sandbox runs: its
// live process groups (a wrapper's two halves folded into one), the groups
// that finished (from the state their wrappers published), and its
// terminals, each group with its origin and its state under the one rule of
// package groupstate. ls prints one Snapshot; the TUI shows a Watch.

// tally reads the group's state off its members.
func tally(g *sandbox.Group) groupstate.Tally {
	var t groupstate.Tally
	for _, m := range g.Members {
		t.Add(m.State, m.PID == g.PGID)
	}
	return t
}

// oldestStart is the earliest known start among the members.
func oldestStart(members []sandbox.Process) time.Time {
	var t time.Time
	for _, m := range members {
		if !m.Started.IsZero() && (t.IsZero() || m.Started.Before(t)) {
			t = m.Started
		}
	}
	return t
}

// idOf is a state directory's name.
func idOf(stateDir string) string {
	if stateDir == "" {
		return ""
	}
	return path.Base(stateDir)
}
