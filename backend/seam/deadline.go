package seam

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"
)

// deadlineSlack is how long before ctx's own deadline a daemon may give up
// on it: Connect sends the remaining time, so the server's deadline falls
// a little earlier than ours.
const deadlineSlack = time.Second

// callerEnded reports whether err means the caller's ctx ended: ctx is done,
// or the daemon gave up on the deadline ctx sent it, just before ctx itself
// expires (then this waits for it). A caller that ran out of time is
// answered "not yet", never with a transport error.
func callerEnded(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > deadlineSlack {
		return false
	}
	if c := connect.CodeOf(err); c != connect.CodeDeadlineExceeded && c != connect.CodeCanceled &&
		!errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	<-ctx.Done()
	return true
}
