package seam

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
	"time"

	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/seam/control"
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

// DiscoverDsh lists what a dsh agent published under root (DshRoot(cwd)),
// judging each group's state against one process-table snapshot taken in
// the same control command. A root that does not exist yields an empty
// discovery, not an error.
func DiscoverDsh(ctx context.Context, proc processconnect.ProcessClient, root string) (DshDiscovery, error) {
	run := control.Runner{Process: proc, Bash: "/bin/bash", Env: dshControlEnv}
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

// group judges one process state dir exactly as ListGroups judges its own
// (judgeGroup), and adds the spill sizes the scan saw.
func (s dshSnapshot) group(root string, e dshEntry) DshGroup {
	g := DshGroup{GroupInfo: judgeGroup(root, e.files(), s.procs, OriginAgent), Agent: true}
	if e.stdoutSize >= 0 {
		g.Stdout = &DshSpill{Path: path.Join(g.StateDir, wrapper.StdoutSpillFile), Size: e.stdoutSize}
	}
	if e.stderrSize >= 0 {
		g.Stderr = &DshSpill{Path: path.Join(g.StateDir, wrapper.StderrSpillFile), Size: e.stderrSize}
	}
	return g
}

// DiscoverAgent is DiscoverDsh over this runtime's sandbox, for the agent
// working in cwd ("" means the runtime's Cwd).
func (r *Runtime) DiscoverAgent(ctx context.Context, cwd string) (DshDiscovery, error) {
	if cwd == "" {
		cwd = r.cfg.Cwd
	}
	root := DshRoot(cwd)
	snap, err := scanDsh(ctx, r.runner, root)
	if err != nil {
		return DshDiscovery{}, err
	}
	return snap.discovery(root), nil
}

// ErrDshUnpublished refuses to signal a group whose pgid is unknown.
var ErrDshUnpublished = errors.New("dsh: no valid process-group id was published; nothing is safe to signal")

// TeardownAgentGroup tears an agent's group down with the seam's own
// transaction (TeardownGroup: TERM, grace, KILL, proof of emptiness; a gone
// sandbox counts as settled). A settled group is a no-op.
func (r *Runtime) TeardownAgentGroup(ctx context.Context, g DshGroup, grace time.Duration, progress func(TeardownEvent)) error {
	if g.Pgid <= 1 {
		return fmt.Errorf("%w (%s)", ErrDshUnpublished, g.ID)
	}
	return r.TeardownGroup(ctx, g.Pgid, grace, progress)
}
