package seam

import (
	"context"
	"time"

	"sandtop/groupstate"
)

// PruneFinished removes the state directories (spills included) of settled
// groups under the runtime root whose directory last changed before cutoff,
// or of every settled group when cutoff is zero, and returns the groups it
// removed. Running and unpublished (possibly still starting) groups, groups
// this runtime holds a handle for, and any agent's root are never touched.
// With a cutoff, a group whose age the control plane cannot tell (stock
// envd) is kept.
func (r *Runtime) PruneFinished(ctx context.Context, cutoff time.Time, dryRun bool) ([]PublishedGroup, error) {
	groups, err := r.listGroups(ctx)
	if err != nil {
		return nil, err
	}
	var gone []PublishedGroup
	var dirs []string
	for _, g := range groups {
		if g.State != groupstate.Settled || g.Owned {
			continue
		}
		if !cutoff.IsZero() && (g.Changed.IsZero() || !g.Changed.Before(cutoff)) {
			continue
		}
		gone = append(gone, g)
		dirs = append(dirs, g.StateDir)
	}
	if dryRun || len(dirs) == 0 {
		return gone, nil
	}
	if err := r.control.Remove(ctx, dirs...); err != nil {
		return nil, err
	}
	return gone, nil
}
