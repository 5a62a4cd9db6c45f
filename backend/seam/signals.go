package seam

import (
	"context"
	"syscall"
)

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

func sigNum(n int) syscall.Signal { return syscall.Signal(n) }

// Signal sends sig to every member of process group pgid and, on sandtop's
// daemon, to its escapees: the processes that left it and keep it live,
// which a teardown ends with it. So a group whose leader has exited and
// whose only live processes escaped is still signalled, as it is still
// listed. delivered is false when no process was left to signal, which is
// not an error. A pgid <= 1 is refused.
func (r *Runtime) Signal(ctx context.Context, pgid int, sig syscall.Signal) (delivered bool, err error) {
	if ts, ok := r.control.(treeSignaller); ok {
		delivered, _, err = ts.SignalTree(ctx, pgid, sig)
		return delivered, err
	}
	return r.control.SignalGroup(ctx, pgid, sig)
}

// ForegroundGroup is the foreground process group of the terminal that pid
// (a terminal's program) runs on; ok is false when pid is gone or has no
// terminal.
func (r *Runtime) ForegroundGroup(ctx context.Context, pid int) (pgid int, ok bool, err error) {
	pgid, _, ok, err = r.control.ForegroundGroup(ctx, pid)
	return pgid, ok, err
}

// GroupAlive reports whether process group pgid still has a live member
// (zombies do not count; an escapee its supervisor follows does). It is
// one cheap question, for following a group's output until it ends;
// Snapshot says everything else.
func (r *Runtime) GroupAlive(ctx context.Context, pgid int) (bool, error) {
	return r.control.GroupAlive(ctx, pgid)
}
