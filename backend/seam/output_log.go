package seam

import (
	"errors"

	"sandtop/outlog"
	"sandtop/wrapper"
)

// OutputLog reads back what a group kept in its state directory (a
// sandbox.Group's StateDir, a Handle's StateDir): its stdout and stderr in
// arrival order, each piece with its stream and arrival time (package
// outlog; outlog.Liner makes lines of them). Unlike Output, whose replay
// carries no times, it gives every kept byte its time, so a front end can
// stamp replayed lines with when they came rather than when it looked.
// The reader keeps its place: calling Next again returns what is new.
func (r *Runtime) OutputLog(stateDir string) *outlog.Reader {
	return outlog.NewReader(r.control, stateDir, wrapper.StdoutSpillFile, wrapper.StderrSpillFile, MaxStateRead,
		func(err error) bool { return errors.Is(err, ErrFileNotFound) })
}
