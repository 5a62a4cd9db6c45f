package backend

import (
	"context"
	"path"
	"sort"

	"sandtop/backend/gen/process/processconnect"
	"sandtop/wrapper"
)

// DeepSeek Harness discovery: the process groups and terminals that a dsh
// agent started through dsh-subprocess-e2b in the same sandbox. Its state
// layout is the one our wrapper writes (wrapper/layout.go), rooted at
// <cwd>/.dsh-e2b instead of our runtime root:
//
//	<cwd>/.dsh-e2b/processes/<uuid>/{pid,exit-code,environment,stdout.log,stderr.log}
//	<cwd>/.dsh-e2b/terminals/<uuid>/   (setup files, deleted once the PTY runs)

// DshDefaultCwd is dsh-subprocess-e2b's default working directory.
const DshDefaultCwd = "/home/user/workspace"

// DshRoot is the agent's state root for a given cwd ("" means the default).
func DshRoot(cwd string) string {
	if cwd == "" {
		cwd = DshDefaultCwd
	}
	return path.Join(cwd, ".dsh-e2b")
}

// DshState is where an agent's process group stands.
type DshState string

const (
	// DshUnpublished: the state dir exists but no pgid was published yet
	// (the agent is still starting it, or died while doing so).
	DshUnpublished DshState = "unpublished"
	// DshRunning: the group has live members and the direct command has
	// not published an exit code.
	DshRunning DshState = "running"
	// DshLeaderExited: the direct command exited (its code is published)
	// but other members of its group still live.
	DshLeaderExited DshState = "leader-exited"
	// DshSettled: no live (non-zombie) member is left.
	DshSettled DshState = "settled"
	// DshInvalid: the published files do not parse; see DshGroup.Err.
	DshInvalid DshState = "invalid"
)

// DshSpill is a spill log the agent's wrapper wrote.
type DshSpill struct {
	Path string
	Size int64
}

// DshGroup is one process group a dsh agent started.
type DshGroup struct {
	ID    string // the state dir's name (a uuid)
	Dir   string // absolute state dir
	Agent bool   // always true: started by an agent, not by sandtop
	State DshState
	// Pgid is the published process-group id; 0 until published.
	Pgid int
	// ExitCode is the direct command's published status, once written.
	ExitCode *int
	// Stdout and Stderr are the spill logs, when the agent kept them.
	Stdout, Stderr *DshSpill
	// Err says why State is DshInvalid.
	Err error
}

// DshTerminalDir is a terminal state dir. dsh's runner deletes every file
// in it once the PTY runs, so it names no pid: it only shows that an agent
// terminal was set up (and not yet cleaned up).
type DshTerminalDir struct {
	ID  string
	Dir string
	// SettingUp is true while setup files are still there.
	SettingUp bool
}

// DshDiscovery is one snapshot of an agent's state root.
type DshDiscovery struct {
	Root      string
	Groups    []DshGroup
	Terminals []DshTerminalDir
}

// DiscoverDsh lists what a dsh agent published under root (DshRoot(cwd)),
// judging each group's state against one process-table snapshot taken in
// the same control command. A root that does not exist yields an empty
// discovery, not an error.
func DiscoverDsh(ctx context.Context, proc processconnect.ProcessClient, root string) (DshDiscovery, error) {
	snap, err := scanDsh(ctx, proc, root)
	if err != nil {
		return DshDiscovery{}, err
	}
	return snap.discovery(root), nil
}

func (s dshSnapshot) discovery(root string) DshDiscovery {
	d := DshDiscovery{Root: root}
	for _, e := range s.entries {
		switch e.kind {
		case "processes":
			d.Groups = append(d.Groups, s.group(root, e))
		case "terminals":
			d.Terminals = append(d.Terminals, DshTerminalDir{
				ID: e.id, Dir: path.Join(root, "terminals", e.id),
				SettingUp: e.pid != nil && *e.pid != "0",
			})
		}
	}
	sort.Slice(d.Groups, func(i, j int) bool { return d.Groups[i].ID < d.Groups[j].ID })
	sort.Slice(d.Terminals, func(i, j int) bool { return d.Terminals[i].ID < d.Terminals[j].ID })
	return d
}

// group judges one process state dir.
func (s dshSnapshot) group(root string, e dshEntry) DshGroup {
	dir := wrapper.StateDir(root, e.id)
	g := DshGroup{ID: e.id, Dir: dir, Agent: true}
	if e.stdoutSize >= 0 {
		g.Stdout = &DshSpill{Path: path.Join(dir, wrapper.StdoutSpillFile), Size: e.stdoutSize}
	}
	if e.stderrSize >= 0 {
		g.Stderr = &DshSpill{Path: path.Join(dir, wrapper.StderrSpillFile), Size: e.stderrSize}
	}
	if e.exitCode != nil && *e.exitCode != "" {
		code, err := wrapper.ParseExitCode(*e.exitCode)
		if err != nil {
			g.State, g.Err = DshInvalid, err
			return g
		}
		g.ExitCode = &code
	}
	if e.pid == nil || *e.pid == "" {
		g.State = DshUnpublished
		return g
	}
	pgid, err := wrapper.ParsePgid(*e.pid)
	if err != nil {
		g.State, g.Err = DshInvalid, err
		return g
	}
	g.Pgid = pgid
	switch {
	case !s.groupLive(pgid):
		g.State = DshSettled
	case g.ExitCode != nil:
		g.State = DshLeaderExited
	default:
		g.State = DshRunning
	}
	return g
}
