// Package sandbox is the one model of what a sandbox runs: its process
// groups, their processes and its terminals, as one Snapshot. The seam
// (backend/seam) produces it, judging each group's state under package
// groupstate; the CLI's ls and the TUI show it as it comes and derive
// nothing again, so they cannot disagree about a group. The package holds
// data and the few readings of it that every front-end needs; it knows no
// RPC and imports only the standard library and groupstate.
package sandbox

import (
	"fmt"
	"strings"
	"time"

	"sandtop/groupstate"
)

// Snapshot is one reading of a sandbox.
type Snapshot struct {
	Taken time.Time
	// Groups are the live groups by pgid, then the finished ones, oldest
	// first, then those never published (pgid 0).
	Groups    []Group
	Terminals []Terminal
}

// Group is one process group.
type Group struct {
	// PGID is 0 for a state directory whose group never started (State
	// Unpublished).
	PGID, SID int
	// LeaderPID is the pid the daemon started for this group (the outer
	// half of a wrapper, or the shim's program): its output can be
	// streamed. 0 when the daemon did not start it.
	LeaderPID int
	// ID and StateDir name the state directory the group published; empty
	// for a group nobody published.
	ID, StateDir string
	Origin       Origin
	// Tag is what the group was spawned with (run --tag); a terminal's
	// group carries its terminal's tag.
	Tag string
	// Argv is what the group was asked to run; nil when only its members
	// tell.
	Argv []string
	PTY  bool
	// State is where the group is in its life, as the seam judged it.
	State groupstate.State
	// Members are the live processes, the wrapper's own marked; Escapees
	// left the group (setsid, a double fork) and are still supervised with
	// it on sandtop's daemon: they keep it live, and a teardown or a
	// signal to the group reaches them too.
	Members, Escapees []Process
	// Exit is how the group's command ended, once its supervisor has
	// published it; nil before, or when nobody will.
	Exit *Exit
	// Started is when the oldest live member started; zero when unknown.
	Started time.Time
	// Problem says why the published state could not be read (or why the
	// exit is unknown).
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

// Exit is how a group's command ended.
type Exit struct {
	Code int
	// Signal names the signal that ended it ("SIGKILL"); "" when it
	// exited by itself.
	Signal string
}

// Origin says who started a group.
type Origin string

const (
	// OriginSandtop: sandtop, through its wrapper, supervisor or shim, or
	// a job typed into a terminal sandtop manages.
	OriginSandtop Origin = "sandtop"
	// OriginAgent: a DeepSeek Harness agent (its state under .dsh-e2b).
	OriginAgent Origin = "agent"
	// OriginEnvd: a plain Start of envd's API (E2B's SDK, or any client
	// but sandtop), on sandtop's daemon, which says so.
	OriginEnvd Origin = "envd"
	// OriginOther: a live group nobody published: another client of the
	// daemon, or a process not started through it at all.
	OriginOther Origin = "other"
)

// What supervises a group sandtop started: the shim of sandtop's daemon,
// the standalone supervisor sandtop uploads to stock envd, or the bash
// wrapper, where stock envd cannot run the supervisor.
const (
	SupervisorShim       = "shim"
	SupervisorStandalone = "supervisor"
	SupervisorWrapper    = "wrapper"
)

// Process is one live process.
type Process struct {
	PID, PPID, PGID, SID int
	State                string // one letter from /proc/<pid>/stat
	Argv                 []string
	Comm, TTY            string
	Started              time.Time // zero when unknown
	CPUPercent           float64   // zero when unknown (stock envd)
	RSSBytes             uint64
	// Wrapper marks the seam wrapper's own processes (the leader, its forks
	// and spill helpers), as opposed to the requested program's.
	Wrapper bool
}

// Terminal is one terminal (a program on a PTY) the daemon holds.
type Terminal struct {
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
	// Title is the command line of the group in the terminal's
	// foreground; "" when unknown.
	Title string
}

// Live reports whether anything of the group still runs.
func (g *Group) Live() bool { return g.State.Live() }

// Leader is the member whose pid is the pgid, nil when it has exited.
func (g *Group) Leader() *Process {
	for i := range g.Members {
		if g.Members[i].PID == g.PGID {
			return &g.Members[i]
		}
	}
	return nil
}

// LiveMembers counts the members that still run (escapees not counted).
func (g *Group) LiveMembers() int {
	n := 0
	for _, m := range g.Members {
		if groupstate.ProcLive(m.State) {
			n++
		}
	}
	return n
}

// Command is what the group runs: the argv it was asked to run, else its
// leader's; nil when neither is known.
func (g *Group) Command() []string {
	if len(g.Argv) > 0 {
		return g.Argv
	}
	if l := g.Leader(); l != nil {
		return l.Argv
	}
	return nil
}

// CommandLine is what the group runs, quoted for reading: Command, else
// the first member's command line; "" when nothing tells. Like every
// string from a sandbox it may hold control characters: a front-end
// cleans it before drawing it.
func (g *Group) CommandLine() string {
	if len(g.Argv) > 0 {
		return quote(g.Argv)
	}
	if l := g.Leader(); l != nil {
		return l.CommandLine()
	}
	if len(g.Members) > 0 {
		return g.Members[0].CommandLine()
	}
	return ""
}

// CommandLine is the process's argv quoted for reading (a word with a
// blank, a quote, a backslash or a dollar sign, or an empty one, in Go's
// double quotes), or its [comm] when the argv is unknown.
func (p *Process) CommandLine() string {
	if len(p.Argv) == 0 {
		if p.Comm != "" {
			return "[" + p.Comm + "]"
		}
		return ""
	}
	return quote(p.Argv)
}

func quote(argv []string) string {
	parts := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\"'\\$") {
			a = fmt.Sprintf("%q", a)
		}
		parts[i] = a
	}
	return strings.Join(parts, " ")
}
