package seam

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"

	"sandtop/wrapper"
)

// GroupDetails are the facts about a group that only its state directory
// holds, read when one group is shown in full (describe), not for every
// listing.
type GroupDetails struct {
	// Cwd is the program's working directory as its supervisor published
	// it; "" when it did not (the bash wrapper, an older sandtop).
	Cwd string
	// Started is when the program started (its pid file was written), and
	// Ended when its exit status was published; zero when unknown (stock
	// envd tells no file times) or not yet.
	Started, Ended time.Time
}

// GroupDetails reads the details of the group published in stateDir (a
// sandbox.Group's StateDir).
func (r *Runtime) GroupDetails(ctx context.Context, stateDir string) (GroupDetails, error) {
	var d GroupDetails
	if stateDir == "" {
		return d, nil
	}
	b, _, err := r.control.ReadRange(ctx, path.Join(stateDir, wrapper.CwdFile), 0, 64<<10)
	switch {
	case err == nil:
		d.Cwd = strings.TrimSuffix(string(b), "\n")
	case !errors.Is(err, ErrFileNotFound):
		return d, err
	}
	entries, err := r.control.ListDir(ctx, stateDir)
	if err != nil {
		return d, nil // the times are a nicety: the rest stands without them
	}
	for _, e := range entries {
		switch {
		case e.ModTime.IsZero():
		case e.Name == wrapper.PidFile:
			d.Started = e.ModTime
		case e.Name == wrapper.ExitCodeFile || e.Name == wrapper.SignalFile:
			if e.ModTime.After(d.Ended) {
				d.Ended = e.ModTime
			}
		}
	}
	return d, nil
}
