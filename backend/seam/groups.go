package seam

import (
	"context"

	"sandtop/backend/seam/control"
	"sandtop/backend/seam/discover"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// listGroups lists every process state directory under the runtime root,
// judged against one snapshot of the process table.
func (r *Runtime) listGroups(ctx context.Context) ([]PublishedGroup, error) {
	out, err := r.discoverGroups(ctx, r.cfg.RuntimeRoot, sandbox.OriginSandtop)
	if err != nil {
		return nil, err
	}
	owned := r.ownedPgids()
	for i := range out {
		out[i].Owned = out[i].Pgid > 0 && owned[out[i].Pgid]
	}
	return out, nil
}

// discoverGroups lists the process groups under any state root in the
// wrapper's layout (<root>/processes/<id>/), marked with origin: this
// runtime's root is read through the control plane, any other root (an
// agent's AgentRoot) with one scanning command, which the extension's file
// reads cannot do outside the runtime root.
func (r *Runtime) discoverGroups(ctx context.Context, root string, origin sandbox.Origin) ([]PublishedGroup, error) {
	var rd discover.StateReader = discover.Scanner{Runner: r.runner}
	if root == r.cfg.RuntimeRoot {
		rd = discover.PlaneStates{Plane: r.control}
	}
	return discover.Groups(ctx, rd, root, origin)
}

func (r *Runtime) ownedPgids() map[int]bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := map[int]bool{}
	for h := range r.live {
		m[h.pgid] = true
	}
	return m
}

// describeGroup reads and judges one state directory of the runtime root.
func (r *Runtime) describeGroup(ctx context.Context, id string, table []control.ProcessEntry) (PublishedGroup, error) {
	f, err := discover.PlaneStates{Plane: r.control}.ReadOne(ctx, r.cfg.RuntimeRoot, id)
	if err != nil {
		return PublishedGroup{ID: id, StateDir: wrapper.StateDir(r.cfg.RuntimeRoot, id), State: groupstate.Unpublished, Origin: sandbox.OriginSandtop}, err
	}
	return discover.Judge(r.cfg.RuntimeRoot, f, table, sandbox.OriginSandtop), nil
}
