package discover

import (
	"context"
	"errors"
	"strings"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// PublishedGroup describes one state directory under <runtimeRoot>/processes/,
// whether sandtop or another client using the same layout (a DeepSeek
// Harness agent) wrote it.
type PublishedGroup struct {
	ID       string
	StateDir string
	Pgid     int // 0 when unpublished
	// State is never Stopped: that is read off the members, not off what
	// was published.
	State groupstate.State
	// ExitCode and Signal are the direct command's published status.
	ExitCode *int
	Signal   string
	// SpillPaths are the spill files present (stdout.log, stderr.log).
	SpillPaths []string
	// Tag is the spawn's tag (SpawnSpec.Tag), kept in the state directory.
	Tag string
	// Changed is when the state directory last changed (its entries are
	// written at the start, and a signal death adds one); zero when the
	// control plane cannot tell.
	Changed time.Time
	// OutputAt is when the group last wrote to its spill files (see
	// control.StateFiles.OutputAt); zero when unknown.
	OutputAt time.Time
	// Argv is the requested argv, which sandtop's wrapper keeps so that a
	// finished group can still say what it ran; read once the direct
	// command has exited (nil before, or when not kept).
	Argv []string
	// Origin says whose state root it was found under.
	Origin sandbox.Origin
	// Owned is true when this runtime holds a live handle for it.
	Owned bool
	// Problem explains a state file that could not be parsed.
	Problem string
}

// PlaneStates reads state directories through the control plane: the
// extension's ListDir and ReadFile, or ls and cat on stock envd. It suits
// the runtime root, which the extension is allowed to read.
type PlaneStates struct{ Plane control.Plane }

func (c PlaneStates) readStates(ctx context.Context, root string) ([]control.StateFiles, []control.ProcessEntry, error) {
	if all, ok := c.Plane.(control.AllStatesReader); ok {
		states, err := all.ReadAllStates(ctx, root)
		if err == nil {
			table, err := c.Plane.Processes(ctx)
			if err != nil {
				return nil, nil, err
			}
			return states, table, nil
		}
		if !errors.Is(err, control.ErrUnsupported) {
			return nil, nil, err
		}
	}
	entries, err := c.Plane.ListDir(ctx, wrapper.ProcessesRoot(root))
	if errors.Is(err, control.ErrFileNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	table, err := c.Plane.Processes(ctx)
	if err != nil {
		return nil, nil, err
	}
	var out []control.StateFiles
	for _, e := range entries {
		if !e.Dir {
			continue
		}
		f, err := c.ReadOne(ctx, root, e.Name)
		if err != nil {
			return nil, nil, err
		}
		f.ModTime = e.ModTime
		out = append(out, f)
	}
	return out, table, nil
}

// ReadOne reads one state directory; one removed meanwhile reads as empty.
func (c PlaneStates) ReadOne(ctx context.Context, root, id string) (control.StateFiles, error) {
	dir := wrapper.StateDir(root, id)
	files, err := c.Plane.ListDir(ctx, dir)
	if errors.Is(err, control.ErrFileNotFound) {
		return control.StateFiles{ID: id, StdoutSize: -1, StderrSize: -1}, nil
	}
	if err != nil {
		return control.StateFiles{ID: id, StdoutSize: -1, StderrSize: -1}, err
	}
	return control.StateFilesFrom(id, files, func(name string) *string {
		b, err := c.Plane.ReadFile(ctx, dir+"/"+name)
		if err != nil {
			return nil
		}
		s := string(b)
		return &s
	}), nil
}

func trimmed(s string) string { return strings.TrimSpace(s) }
