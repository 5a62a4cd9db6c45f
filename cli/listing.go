package cli

import (
	"context"
	"sort"
	"time"

	"sandtop/backend/seam"
	"sandtop/groupstate"
	"sandtop/sandbox"
)

// The document "sandtop ls -o json" prints. Fields are stable: new ones
// may appear, none is removed or changes meaning without bumping Version.

type listDoc struct {
	Version   int            `json:"version"`
	Target    string         `json:"target"`
	Taken     time.Time      `json:"taken"`
	Groups    []listGroup    `json:"groups"`
	Terminals []listTerminal `json:"terminals"`
	// E2B is the sandbox as E2B's control plane describes it (E2B only).
	E2B *e2bListRow `json:"e2b,omitempty"`
}

type listGroup struct {
	// Sandbox is the group's sandbox, in ls -A only (as it names them).
	Sandbox string `json:"sandbox,omitempty"`
	PGID    int    `json:"pgid"`
	ID      string `json:"id"` // state directory under <runtime root>/processes (an agent's: under its .dsh-e2b/processes)
	// Origin is who started it: "sandtop" (through sandtop's wrapper) or
	// "agent" (a DeepSeek Harness agent's provider).
	Origin string `json:"origin"`
	Tag    string `json:"tag,omitempty"` // from "run --tag", kept in the sandbox
	// State is running, stopped (every live member is), leader-exited
	// (descendants live on), settled (no live member) or unpublished (still
	// starting, or failed to start).
	State string `json:"state"`
	// Command is the argv that was asked for (what the wrapper runs, or
	// what it recorded in the state directory); empty when not known.
	Command  []string `json:"command,omitempty"`
	ExitCode *int     `json:"exit_code,omitempty"`
	Signal   string   `json:"signal,omitempty"`
	// Started is when the group's oldest live member started; absent once
	// settled, or when the daemon cannot tell (stock envd).
	Started *time.Time `json:"started,omitempty"`
	// Members are the live processes of the group, the wrapper's own
	// included (marked); empty once settled.
	Members []listProcess `json:"members"`
	// Escapees are processes that left the group (setsid, a double fork)
	// but are still supervised with it on sandtop's daemon: they keep the
	// group live, and a teardown ends them too.
	Escapees []listProcess `json:"escapees,omitempty"`
	// Problem says why the exit status is unknown (or unreadable).
	Problem string `json:"problem,omitempty"`
	// Supervisor is what supervises the live group: "shim" (sandtop's
	// daemon), "supervisor" (sandtop's, uploaded to stock envd) or
	// "wrapper" (the bash wrapper, where stock envd cannot run sandtop's
	// supervisor: eight processes a group); absent once settled.
	Supervisor string `json:"supervisor,omitempty"`
	// Stuck is why the group looks stuck (package stuck's default rules:
	// "waiting for input", "leader gone", "idle 12m", "spinning 11m");
	// absent when it does not.
	Stuck string `json:"stuck,omitempty"`
}

type listProcess struct {
	PID   int      `json:"pid"`
	PPID  int      `json:"ppid,omitempty"`
	State string   `json:"state"` // one letter from /proc/<pid>/stat
	Argv  []string `json:"argv,omitempty"`
	// Wrapper marks the seam wrapper's own processes (the group leader and
	// its spill helpers), as opposed to the requested program and its
	// children.
	Wrapper bool `json:"wrapper"`
	// CPUPercent and RSSBytes need the daemon's extension (not stock envd).
	CPUPercent float64 `json:"cpu_percent,omitempty"`
	RSSBytes   uint64  `json:"rss_bytes,omitempty"`
	// Started needs the daemon's extension too.
	Started *time.Time `json:"started,omitempty"`
}

type listTerminal struct {
	// Sandbox is the terminal's sandbox, in ls -A only.
	Sandbox string `json:"sandbox,omitempty"`
	PID     int    `json:"pid"`
	// Origin is always "terminal": a program on a PTY.
	Origin string   `json:"origin"`
	ID     string   `json:"id"`
	Tag    string   `json:"tag,omitempty"`
	Argv   []string `json:"argv,omitempty"`
	Rows   int      `json:"rows,omitempty"`
	Cols   int      `json:"cols,omitempty"`
	// ForegroundPGID and InputWaiting need the daemon's extension.
	ForegroundPGID int  `json:"foreground_pgid,omitempty"`
	InputWaiting   bool `json:"input_waiting"`
}

// listSandbox takes one snapshot through the seam and keeps the groups
// someone published (sandtop's and agents'), and the sandtop terminals.
func listSandbox(ctx context.Context, s *connection, now func() time.Time) (listDoc, error) {
	doc := listDoc{Version: jsonVersion, Target: s.Target.Name, Taken: now().UTC(),
		Groups: []listGroup{}, Terminals: []listTerminal{}}
	snap, err := s.Runtime.Snapshot(ctx, seam.WatchOptions{})
	if err != nil {
		return doc, err
	}
	return listSnapshot(doc, snap), nil
}

// listSnapshot puts one snapshot of the seam in the listing's terms, into
// doc (which names the sandbox and the time).
func listSnapshot(doc listDoc, snap sandbox.Snapshot) listDoc {
	for _, g := range snap.Groups {
		if g.Origin == sandbox.OriginOther || g.StateDir == "" && g.Origin != sandbox.OriginEnvd {
			continue // not a group this sandtop, an agent or an envd client started
		}
		doc.Groups = append(doc.Groups, listGroupOf(&g))
	}
	for _, t := range snap.Terminals {
		if !t.Sandtop {
			continue
		}
		doc.Terminals = append(doc.Terminals, listTerminal{PID: t.PID, Origin: originTerminal, ID: t.ID, Tag: t.Tag, Argv: t.Argv,
			Rows: t.Rows, Cols: t.Cols, ForegroundPGID: t.ForegroundPGID, InputWaiting: t.InputWaiting})
	}
	// Live groups first, then by state: what needs attention is at the top.
	sort.SliceStable(doc.Groups, func(i, j int) bool {
		return groupstate.State(doc.Groups[i].State).Rank() < groupstate.State(doc.Groups[j].State).Rank()
	})
	sort.Slice(doc.Terminals, func(i, j int) bool { return doc.Terminals[i].PID < doc.Terminals[j].PID })
	return doc
}

// listGroupOf is a group in the listing's terms.
func listGroupOf(g *sandbox.Group) listGroup {
	lg := listGroup{PGID: g.PGID, ID: g.ID, Origin: string(g.Origin), Tag: g.Tag, State: string(g.State),
		Command: g.Command(), Members: listProcesses(g.Members), Escapees: listProcesses(g.Escapees),
		Problem: g.Problem, Stuck: g.Stuck, Supervisor: g.Supervisor}
	if lg.Members == nil {
		lg.Members = []listProcess{}
	}
	if g.Exit != nil {
		code := g.Exit.Code
		lg.ExitCode, lg.Signal = &code, g.Exit.Signal
	}
	if !g.Started.IsZero() {
		t := g.Started
		lg.Started = &t
	}
	return lg
}

// originTerminal marks terminals in the listing, next to the groups'
// "sandtop" and "agent".
const originTerminal = "terminal"

// listProcesses puts the seam's processes in the listing's terms.
func listProcesses(ps []sandbox.Process) []listProcess {
	if len(ps) == 0 {
		return nil
	}
	out := make([]listProcess, len(ps))
	for i, p := range ps {
		out[i] = listProcess{PID: p.PID, PPID: p.PPID, State: p.State, Argv: p.Argv, Wrapper: p.Wrapper,
			CPUPercent: p.CPUPercent, RSSBytes: p.RSSBytes}
		if !p.Started.IsZero() {
			t := p.Started
			out[i].Started = &t
		}
	}
	return out
}
