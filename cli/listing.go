package cli

import (
	"context"
	"sort"
	"time"

	"sandtop/backend"
	"sandtop/groupstate"
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
	PGID int    `json:"pgid"`
	ID   string `json:"id"` // state directory under <runtime root>/processes (an agent's: under its .dsh-e2b/processes)
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
	PID int `json:"pid"`
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

// listSandbox takes one snapshot: the published groups with their live
// members, and the terminals.
func listSandbox(ctx context.Context, s *session) (listDoc, error) {
	ctx = backend.OneTable(ctx) // one read of the process table for all of it
	doc := listDoc{Version: jsonVersion, Target: s.Target.Name, Taken: time.Now().UTC(),
		Groups: []listGroup{}, Terminals: []listTerminal{}}
	groups, err := s.Runtime.ListAllGroups(ctx)
	if err != nil {
		return doc, err
	}
	members, escapees, err := groupMembers(ctx, s)
	if err != nil {
		return doc, err
	}
	terms, err := s.Runtime.ListTerminals(ctx)
	if err != nil {
		return doc, err
	}
	for _, g := range groups {
		lg := listGroup{PGID: g.Pgid, ID: g.ID, Origin: string(g.Origin), Tag: g.Tag, State: string(g.State), ExitCode: g.ExitCode,
			Signal: g.Signal, Members: []listProcess{}, Problem: g.Problem}
		if g.State != backend.GroupSettled && g.Pgid > 0 {
			lg.Members = append(lg.Members, members[g.Pgid]...)
			lg.Escapees = escapees[g.Pgid]
			lg.Command = markWrapperMembers(g.Pgid, lg.Members)
			if lg.Command == nil {
				lg.Command = leaderArgv(g.Pgid, lg.Members) // no wrapper: a shim runs it
			}
			lg.Started = oldestStart(lg.Members)
			var t groupstate.Tally
			for _, m := range lg.Members {
				t.Add(m.State, m.PID == g.Pgid)
			}
			if t.State() == groupstate.Stopped {
				lg.State = string(groupstate.Stopped) // shown instead of running or leader-exited
			}
		}
		if lg.Command == nil {
			lg.Command = g.Argv // a finished group still says what it ran
		}
		doc.Groups = append(doc.Groups, lg)
	}
	for _, t := range terms {
		lt := listTerminal{PID: t.Pid, Origin: originTerminal, ID: t.ID, Tag: t.Tag, Argv: t.Argv, Rows: t.Rows, Cols: t.Cols}
		if t.Foreground != nil {
			lt.ForegroundPGID, lt.InputWaiting = t.Foreground.Pgid, t.Foreground.InputWaiting
		}
		doc.Terminals = append(doc.Terminals, lt)
	}
	// Live groups first, newest state dirs last within each: what needs
	// attention is at the top.
	sort.SliceStable(doc.Groups, func(i, j int) bool {
		return groupstate.State(doc.Groups[i].State).Rank() < groupstate.State(doc.Groups[j].State).Rank()
	})
	sort.Slice(doc.Terminals, func(i, j int) bool { return doc.Terminals[i].PID < doc.Terminals[j].PID })
	return doc, nil
}

// originTerminal marks terminals in the listing, next to the groups'
// "sandtop" and "agent".
const originTerminal = "terminal"

// leaderArgv is the argv of the group's leader, when it is a member.
func leaderArgv(pgid int, members []listProcess) []string {
	for _, m := range members {
		if m.PID == pgid {
			return m.Argv
		}
	}
	return nil
}

// groupMembers maps pgid to its live processes: from the extension's
// grouped table with argv and usage, or from the control plane's bare
// process table on a stock envd.
func groupMembers(ctx context.Context, s *session) (map[int][]listProcess, map[int][]listProcess, error) {
	out, escapees := map[int][]listProcess{}, map[int][]listProcess{}
	if s.Extension {
		members, esc, err := s.Runtime.Members(ctx)
		if err == nil {
			conv := func(to map[int][]listProcess, from map[int][]backend.Member) {
				for pgid, ms := range from {
					for _, m := range ms {
						p := listProcess{PID: m.Pid, PPID: m.Ppid, State: m.State, Argv: m.Argv, CPUPercent: m.CPUPercent, RSSBytes: m.RSSBytes}
						if !m.Started.IsZero() {
							t := m.Started
							p.Started = &t
						}
						to[pgid] = append(to[pgid], p)
					}
				}
			}
			conv(out, members)
			conv(escapees, esc)
			return out, escapees, nil
		}
	}
	table, err := s.Runtime.Control().Processes(ctx)
	if err != nil {
		return nil, nil, err
	}
	for _, p := range table {
		if p.Live() {
			out[p.Pgid] = append(out[p.Pgid], listProcess{PID: p.Pid, State: p.State})
		}
	}
	return out, escapees, nil
}

// oldestStart is the earliest start time among members, nil if none is
// known.
func oldestStart(members []listProcess) *time.Time {
	var t *time.Time
	for _, m := range members {
		if m.Started != nil && (t == nil || m.Started.Before(*t)) {
			t = m.Started
		}
	}
	return t
}
