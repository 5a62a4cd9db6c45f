package seam

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"sandtop/backend/seam/discover"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// Agent groups are found by the seam, on either plane, with no
// configuration: the leaders of an agent provider's groups name their
// state directories in their argv (the extension's ListGroups marks them
// origin "agent"; on stock envd ps shows the same). Each state root found
// that way, and the configured agent workspace's, is then read with the
// one discovery path (discoverGroups), so finished groups under a known
// root are listed too.

// agentGroups lists the process groups agents' providers published, judged
// against one process table per root, marked OriginAgent. Workspaces
// (besides the configured AgentWorkspace) are further agent workspaces
// whose roots are read whether or not a live group names them.
func (r *Runtime) agentGroups(ctx context.Context, workspaces ...string) ([]PublishedGroup, error) {
	roots, err := r.agentRoots(ctx, workspaces)
	if err != nil {
		return nil, err
	}
	var out []PublishedGroup
	var errs []error
	for _, root := range roots {
		gs, err := r.discoverGroups(ctx, root, sandbox.OriginAgent)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, gs...)
	}
	if len(out) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// agentRoots are the agent state roots to read: the configured
// workspace's, then every root a live agent group's leader names.
func (r *Runtime) agentRoots(ctx context.Context, workspaces []string) ([]string, error) {
	var roots []string
	for _, ws := range append([]string{r.cfg.AgentWorkspace}, workspaces...) {
		if ws != "" {
			roots = append(roots, AgentRoot(ws))
		}
	}
	dirs, err := r.control.AgentStateDirs(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range dirs {
		if root := wrapper.AgentRoot(d); root != r.cfg.RuntimeRoot {
			roots = append(roots, root)
		}
	}
	slices.Sort(roots)
	return slices.Compact(roots), nil
}

// discoverAgent is DiscoverAgent over this runtime's sandbox, for the agent
// working in cwd ("" means the runtime's Cwd).
func (r *Runtime) discoverAgent(ctx context.Context, cwd string) (AgentDiscovery, error) {
	if cwd == "" {
		cwd = r.cfg.Cwd
	}
	return discover.Agent(ctx, r.runner, AgentRoot(cwd))
}

// teardownAgentGroup tears an agent's group down with the seam's own
// transaction (TeardownGroup: TERM, grace, KILL, proof of emptiness; a gone
// sandbox counts as settled). A settled group is a no-op.
func (r *Runtime) teardownAgentGroup(ctx context.Context, g AgentGroup, grace time.Duration, progress func(TeardownEvent)) error {
	if g.Pgid <= 1 {
		return fmt.Errorf("%w (%s)", ErrAgentUnpublished, g.ID)
	}
	return r.TeardownGroup(ctx, g.Pgid, grace, progress)
}
