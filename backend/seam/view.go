package seam

import (
	"path"
	"time"

	"sandtop/groupstate"
)

// The seam's read side. Snapshot and Watch say what a sandbox runs: its
// live process groups (a wrapper's two halves folded into one), the groups
// that finished (from the state their wrappers published), and its
// terminals, each group with its origin and its state under the one rule of
// package groupstate. ls prints one Snapshot; the TUI shows a Watch.

// OriginOther is a live group nobody published: another client of the
// daemon, or a process not started through it at all.
const OriginOther GroupOrigin = "other"

// Snapshot is one reading of a sandbox.
type Snapshot struct {
	Taken time.Time
	// Groups are the live groups by pgid, then the finished ones, oldest
	// first.
	Groups    []GroupView
	Terminals []TerminalView
}

// GroupView is one process group.
type GroupView struct {
	PGID, SID int
	// LeaderPID is the pid the daemon started for this group (the outer
	// half of a wrapper, or the shim's program): its output can be
	// streamed. 0 when the daemon did not start it.
	LeaderPID int
	// ID and StateDir name the state directory the group published; empty
	// for a group nobody published.
	ID, StateDir string
	Origin       GroupOrigin
	Tag          string
	// Argv is what the group was asked to run; nil when only its members
	// tell.
	Argv  []string
	PTY   bool
	State groupstate.State
	// Members are the live processes, the wrapper's own marked; Escapees
	// left the group (setsid, a double fork) and are still supervised with
	// it on sandtop's daemon.
	Members, Escapees []ProcessView
	// ExitCode and Signal are the published status of the direct command.
	ExitCode *int
	Signal   string
	// Started is when the oldest live member started; zero when unknown.
	Started time.Time
	// Problem says why the published state could not be read.
	Problem string
	// Supervisor is what supervises a live group sandtop started (one of
	// the Supervisor… constants); "" when the table cannot tell.
	Supervisor string
	// OutputAt is when the group last wrote output to its spill files
	// (zero when unknown); Stuck is why the group looks stuck under the
	// rules of package stuck, "" when it does not.
	OutputAt time.Time
	Stuck    string
}

// What supervises a group sandtop started: the shim of sandtop's daemon,
// the standalone supervisor sandtop uploads to stock envd, or the bash
// wrapper, where stock envd cannot run the supervisor.
const (
	SupervisorShim       = "shim"
	SupervisorStandalone = "supervisor"
	SupervisorWrapper    = "wrapper"
)

// ProcessView is one live process.
type ProcessView struct {
	PID, PPID, PGID, SID int
	State                string // one letter from /proc/<pid>/stat
	Argv                 []string
	Comm, TTY            string
	Started              time.Time // zero when unknown
	CPUPercent           float64
	RSSBytes             uint64
	// Wrapper marks the seam wrapper's own processes (the leader, its forks
	// and spill helpers), as opposed to the requested program's.
	Wrapper bool
}

// TerminalView is one terminal (a program on a PTY) the daemon holds.
type TerminalView struct {
	PID, SID int
	// Sandtop marks a terminal sandtop spawned; only those have an ID (its
	// state directory's name) and a Tag (what it was spawned with).
	Sandtop bool
	ID, Tag string
	// Argv is the program the terminal runs, as the process table has it.
	Argv           []string
	Rows, Cols     int // 0 when unknown (stock envd)
	ForegroundPGID int // 0 when unknown
	InputWaiting   bool
	Started        time.Time
}

// Live reports whether any member still runs.
func (g *GroupView) Live() bool { return g.State.Live() }

// Leader is the member whose pid is the pgid, nil when it has exited.
func (g *GroupView) Leader() *ProcessView {
	for i := range g.Members {
		if g.Members[i].PID == g.PGID {
			return &g.Members[i]
		}
	}
	return nil
}

// tally judges the group's state from its members.
func (g *GroupView) tally() groupstate.State {
	var t groupstate.Tally
	for _, m := range g.Members {
		t.Add(m.State, m.PID == g.PGID)
	}
	return t.State()
}

// oldestStart is the earliest known start among the members.
func oldestStart(members []ProcessView) time.Time {
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
