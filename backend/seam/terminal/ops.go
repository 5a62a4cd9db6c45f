package terminal

import (
	"context"
	"errors"
	"sync"
)

// errTerminalTerminating rejects operations that start once Terminate has
// begun.
var errTerminalTerminating = errors.New("terminal is terminating")

// terminalOps tracks a Terminal's in-flight calls (Write, Resize,
// InspectForeground, SignalForeground) so that Terminate can cancel them
// and wait until none is still running before it tears the session down.
type terminalOps struct {
	mu      sync.Mutex
	closing bool
	stop    context.Context
	cancel  context.CancelFunc
	running sync.WaitGroup
}

func newTerminalOps() *terminalOps {
	ctx, cancel := context.WithCancel(context.Background())
	return &terminalOps{stop: ctx, cancel: cancel}
}

// begin registers one call. The returned context ends with the caller's ctx
// or when Terminate starts; end must be called when the call returns.
func (t *terminalOps) begin(ctx context.Context) (context.Context, func(), error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closing {
		return nil, nil, errTerminalTerminating
	}
	t.running.Add(1)
	opCtx, cancel := context.WithCancelCause(ctx)
	unhook := context.AfterFunc(t.stop, func() { cancel(errTerminalTerminating) })
	return opCtx, func() {
		unhook()
		cancel(nil)
		t.running.Done()
	}, nil
}

// closeAndJoin refuses new calls, cancels running ones and waits for them.
// It is safe to call more than once.
func (t *terminalOps) closeAndJoin() {
	t.mu.Lock()
	t.closing = true
	t.mu.Unlock()
	t.cancel()
	t.running.Wait()
}

// terminating reports whether Terminate has begun.
func (t *terminalOps) terminating() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closing
}

// opError turns a failure caused by Terminate's cancellation into the
// documented "terminal is terminating" error.
func opError(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errTerminalTerminating) {
		return errTerminalTerminating
	}
	return err
}
