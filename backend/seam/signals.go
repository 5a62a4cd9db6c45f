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

// SignalGroup sends sig to every process of group pgid and, on sandtop's
// daemon, to its escapees: the processes that left it and keep it live,
// which a teardown ends with it. So a group whose leader has exited and
// whose only live processes escaped is still signalled, as it is still
// listed. delivered is false when no process was left to signal.
func (r *Runtime) SignalGroup(ctx context.Context, pgid int, sig syscall.Signal) (delivered bool, err error) {
	if ts, ok := r.control.(treeSignaller); ok {
		delivered, _, err = ts.SignalTree(ctx, pgid, sig)
		return delivered, err
	}
	return r.control.SignalGroup(ctx, pgid, sig)
}
