package uisource

import (
	"context"

	"sandtop/backend/seam"
	"sandtop/stuck"
	"sandtop/ui"
)

// Summary reads a sandbox once (one seam Snapshot: the process table, the
// published groups and the terminals) for the fleet view's counts. The
// finished groups are left out but one: the counts are of live ones.
func Summary(ctx context.Context, rt *seam.Runtime, cwd string, rules *stuck.Rules) (ui.Snapshot, error) {
	if cwd == "" {
		cwd = "/"
	}
	snap, err := rt.Snapshot(ctx, seam.WatchOptions{Workspaces: []string{cwd}, MaxFinished: 1, Stuck: rules})
	if err != nil {
		return ui.Snapshot{}, err
	}
	return toUI(snap), nil
}
