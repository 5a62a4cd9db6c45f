package discover

import (
	"context"
	"errors"
	"path"
	"sort"

	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/seam/control"
	"sandtop/sandbox"
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

// DshSpill is a spill log the agent's wrapper wrote.
type DshSpill struct {
	Path string
	Size int64
}

// DshGroup is one process group a dsh agent started, in the seam's own
// vocabulary (GroupInfo: ID, StateDir, Pgid, State, ExitCode, SpillPaths,
// Problem) and marked as the agent's.
type DshGroup struct {
	GroupInfo
	// Agent is always true: an agent started it, not sandtop.
	Agent bool
	// Stdout and Stderr are the spill logs with their sizes, when present.
	Stdout, Stderr *DshSpill
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

// Dsh lists what a dsh agent published under root (DshRoot(cwd)),
// judging each group's state against one process-table snapshot taken in
// the same control command. A root that does not exist yields an empty
// discovery, not an error.
func Dsh(ctx context.Context, proc processconnect.ProcessClient, root string) (DshDiscovery, error) {
	return Agent(ctx, control.Runner{Process: proc, Bash: "/bin/bash", Env: dshControlEnv}, root)
}

// Agent is Dsh with the given runner (a Runtime's).
func Agent(ctx context.Context, run control.Runner, root string) (DshDiscovery, error) {
	snap, err := scanDsh(ctx, run, root)
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

// group judges one process state dir exactly as the seam judges its own
// (Judge), and adds the spill sizes the scan saw.
func (s dshSnapshot) group(root string, e dshEntry) DshGroup {
	g := DshGroup{GroupInfo: Judge(root, e.files(), s.procs, sandbox.OriginAgent), Agent: true}
	if e.stdoutSize >= 0 {
		g.Stdout = &DshSpill{Path: path.Join(g.StateDir, wrapper.StdoutSpillFile), Size: e.stdoutSize}
	}
	if e.stderrSize >= 0 {
		g.Stderr = &DshSpill{Path: path.Join(g.StateDir, wrapper.StderrSpillFile), Size: e.stderrSize}
	}
	return g
}

// ErrDshUnpublished refuses to signal a group whose pgid is unknown.
var ErrDshUnpublished = errors.New("dsh: no valid process-group id was published; nothing is safe to signal")
