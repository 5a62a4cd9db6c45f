package uisource

import (
	"context"

	"sandtop/backend/seam"
	"sandtop/sandbox"
	"sandtop/stuck"
)

// Summary reads a sandbox once for the fleet view's counts: one seam
// Snapshot of the live table and the terminals (the counts are of live
// groups, so no published state of finished ones is read).
func Summary(ctx context.Context, rt *seam.Runtime, rules *stuck.Rules) (sandbox.Snapshot, error) {
	return rt.Snapshot(ctx, seam.WatchOptions{LiveOnly: true, Stuck: rules})
}
