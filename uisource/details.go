package uisource

import (
	"context"

	"sandtop/ui"
)

// GroupDetails reads what only a group's state directory tells, for the
// TUI's describe view (ui.GroupDescriber): the working directory its
// supervisor published, and when it started and ended.
func (s *backendSource) GroupDetails(ctx context.Context, stateDir string) (ui.GroupDetails, error) {
	d, err := s.rt.GroupDetails(ctx, stateDir)
	if err != nil {
		return ui.GroupDetails{}, err
	}
	return ui.GroupDetails{Cwd: d.Cwd, Started: d.Started, Ended: d.Ended}, nil
}

var _ ui.GroupDescriber = (*backendSource)(nil)
