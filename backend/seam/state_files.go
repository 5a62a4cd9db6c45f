package seam

import (
	"context"
	"errors"
	"fmt"
	"path"

	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

// MaxStateRead bounds one ReadStateFile, and each read OutputLog makes:
// sandtop's daemon answers no more per call.
const MaxStateRead = control.MaxReadRange

// ReadStateFile reads up to length bytes (at most MaxStateRead) of file name in a
// group's state directory (a GroupView's StateDir: sandtop's or an agent's),
// from offset. size is the file's size when read; fewer bytes than asked
// mean its end. A missing file matches ErrFileNotFound.
func (r *Runtime) ReadStateFile(ctx context.Context, stateDir, name string, offset int64, length int) (data []byte, size int64, err error) {
	if err := checkStateDir(stateDir); err != nil {
		return nil, 0, err
	}
	if name == "" || name == "." || name == ".." || path.Base(name) != name {
		return nil, 0, fmt.Errorf("state file name %q must be a plain file name", name)
	}
	return r.control.ReadRange(ctx, path.Join(stateDir, name), offset, length)
}

// RemoveGroupState removes one finished group's state directory (spills
// included) under the runtime root, as PruneFinished does for all of
// them. A group with a live member, one still unpublished (maybe
// starting) and one this runtime holds a handle for are refused; a
// directory already gone is fine.
func (r *Runtime) RemoveGroupState(ctx context.Context, stateDir string) error {
	id := path.Base(stateDir)
	if err := checkStateDir(stateDir); err != nil || stateDir != wrapper.StateDir(r.cfg.RuntimeRoot, id) {
		return fmt.Errorf("state directory %q is not one of the runtime root %s", stateDir, wrapper.ProcessesRoot(r.cfg.RuntimeRoot))
	}
	if _, err := r.control.ListDir(ctx, stateDir); errors.Is(err, ErrFileNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	table, err := r.control.Processes(ctx)
	if err != nil {
		return err
	}
	g, err := r.describeGroup(ctx, id, table)
	if err != nil {
		return err
	}
	switch {
	case g.Pgid > 0 && r.ownedPgids()[g.Pgid]:
		return fmt.Errorf("group %d (%s) is held by this runtime; its state stays", g.Pgid, id)
	case g.Pgid == 0 && g.Problem == "":
		return fmt.Errorf("group %s has not published its pid yet; its state stays", id)
	case g.Pgid > 0 && control.GroupLiveIn(table, g.Pgid):
		return fmt.Errorf("group %d (%s) still has a live member; its state stays", g.Pgid, id)
	}
	return r.control.Remove(ctx, stateDir)
}

// checkStateDir accepts a clean absolute path of the wrapper's layout,
// <root>/processes/<id>.
func checkStateDir(dir string) error {
	if !path.IsAbs(dir) || path.Clean(dir) != dir || path.Base(path.Dir(dir)) != wrapper.ProcessesDir {
		return fmt.Errorf("%q is not a group's state directory (<root>/%s/<id>)", dir, wrapper.ProcessesDir)
	}
	return nil
}
