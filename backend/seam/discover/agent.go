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

// AgentDefaultCwd is dsh-subprocess-e2b's default working directory.
const AgentDefaultCwd = "/home/user/workspace"

// AgentRoot is the agent's state root for a given cwd ("" means the default).
func AgentRoot(cwd string) string {
	if cwd == "" {
		cwd = AgentDefaultCwd
	}
	return path.Join(cwd, ".dsh-e2b")
}

// AgentSpill is a spill log the agent's wrapper wrote.
type AgentSpill struct {
	Path string
	Size int64
}

// AgentGroup is one process group an agent started, in the seam's own
// vocabulary (PublishedGroup: ID, StateDir, Pgid, State, ExitCode, SpillPaths,
// Problem) and marked as the agent's.
type AgentGroup struct {
	PublishedGroup
	// Agent is always true: an agent started it, not sandtop.
	Agent bool
	// Stdout and Stderr are the spill logs with their sizes, when present.
	Stdout, Stderr *AgentSpill
}

// AgentTerminalDir is a terminal state dir. dsh's runner deletes every file
// in it once the PTY runs, so it names no pid: it only shows that an agent
// terminal was set up (and not yet cleaned up).
type AgentTerminalDir struct {
	ID  string
	Dir string
	// SettingUp is true while setup files are still there.
	SettingUp bool
}

// AgentDiscovery is one snapshot of an agent's state root.
type AgentDiscovery struct {
	Root      string
	Groups    []AgentGroup
	Terminals []AgentTerminalDir
}

// DiscoverAgent lists what an agent published under root (AgentRoot(cwd)),
// judging each group's state against one process-table snapshot taken in
// the same control command. A root that does not exist yields an empty
// discovery, not an error.
func DiscoverAgent(ctx context.Context, proc processconnect.ProcessClient, root string) (AgentDiscovery, error) {
	return Agent(ctx, control.Runner{Process: proc, Bash: "/bin/bash", Env: agentControlEnv}, root)
}

// Agent is DiscoverAgent with the given runner (a Runtime's).
func Agent(ctx context.Context, run control.Runner, root string) (AgentDiscovery, error) {
	snap, err := scanAgent(ctx, run, root)
	if err != nil {
		return AgentDiscovery{}, err
	}
	return snap.discovery(root), nil
}

func (s agentSnapshot) discovery(root string) AgentDiscovery {
	d := AgentDiscovery{Root: root}
	for _, e := range s.entries {
		switch e.kind {
		case "processes":
			d.Groups = append(d.Groups, s.group(root, e))
		case "terminals":
			d.Terminals = append(d.Terminals, AgentTerminalDir{
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
func (s agentSnapshot) group(root string, e agentEntry) AgentGroup {
	g := AgentGroup{PublishedGroup: Judge(root, e.files(), s.procs, sandbox.OriginAgent), Agent: true}
	if e.stdoutSize >= 0 {
		g.Stdout = &AgentSpill{Path: path.Join(g.StateDir, wrapper.StdoutSpillFile), Size: e.stdoutSize}
	}
	if e.stderrSize >= 0 {
		g.Stderr = &AgentSpill{Path: path.Join(g.StateDir, wrapper.StderrSpillFile), Size: e.stderrSize}
	}
	return g
}

// ErrAgentUnpublished refuses to signal a group whose pgid is unknown.
var ErrAgentUnpublished = errors.New("agent: no valid process-group id was published; nothing is safe to signal")
