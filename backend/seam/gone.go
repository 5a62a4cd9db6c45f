package seam

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// healthTimeout bounds the health check that confirms a lost sandbox.
const healthTimeout = 2 * time.Second

// sandboxGone reports whether err proves that the sandbox no longer exists,
// in which case nothing can still run in it and cleanup counts as settled.
// A configured recogniser (E2B's "sandbox not found") is trusted outright;
// a connection failure counts only if a health check fails the same way.
func (r *Runtime) sandboxGone(err error) bool {
	if err == nil {
		return false
	}
	if r.cfg.SandboxGone != nil && r.cfg.SandboxGone(err) {
		return true
	}
	if !unreachable(err) {
		return false
	}
	ctx, cancel := context.WithTimeout(context.Background(), healthTimeout)
	defer cancel()
	_, herr := r.proc.List(ctx, connect.NewRequest(&process.ListRequest{}))
	return herr != nil && (unreachable(herr) || (r.cfg.SandboxGone != nil && r.cfg.SandboxGone(herr)))
}

// unreachable is a transport-level failure to reach the daemon at all.
func unreachable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return connect.CodeOf(err) == connect.CodeUnavailable
}
