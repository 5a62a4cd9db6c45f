package seam

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// Detach lets go of the group without ending it, as a CLI that started it
// and exits would: the output stream and the polling of the published
// status stop, the spill files stay (for 'sandtop logs'), and the runtime
// no longer owns the group, so neither Dispose nor a release terminates it.
// Done closes, and Outcome answers ErrDetached unless the outcome was
// already settled. Stdout and Stderr in pipe mode end.
func (h *Handle) Detach() {
	if h.detached.Swap(true) {
		return
	}
	h.rt.release(h)
	h.stopStream()
}

// Terminate starts the termination transaction on the whole group: SIGTERM,
// the grace, then SIGKILL plus a SIGKILL of the wrapper through envd, and
// succeeds only on proof that the group is empty. It never blocks. It is a
// no-op while an attempt runs and for ever once the group is proven gone
// (the pgid might be reused). A failed attempt is kept for WaitForExit and
// may be retried by calling Terminate again.
func (h *Handle) Terminate() {
	h.mu.Lock()
	if h.quiescent || h.attempt != nil {
		h.mu.Unlock()
		return
	}
	h.termRequested = true
	h.termFailure = nil
	attempt := make(chan struct{})
	h.attempt = attempt
	h.mu.Unlock()

	for _, p := range []*outputPipe{h.outPipe, h.errPipe} {
		if p != nil {
			p.abort(errTerminated)
		}
	}
	go func() {
		err := h.rt.teardown(h.rt.bg, h.pgid, h.grace, h.tearHooks(), nil)
		h.mu.Lock()
		h.attempt = nil
		if err == nil {
			h.quiescent = true
		} else if !h.quiescent {
			h.termFailure = err
		}
		h.mu.Unlock()
		close(attempt)
	}()
}

func (h *Handle) tearHooks() tearHooks {
	return tearHooks{
		tier: h.setTier,
		leaderKill: func(ctx context.Context) {
			// Only while the wrapper still runs: once its end event came, the
			// pid may belong to someone else.
			if h.StartPid() <= 0 || h.streamEnded() {
				return
			}
			if h.supervised {
				// The supervisor publishes how the program ended, and
				// leaves once it has: killing it would lose that.
				return
			}
			_, _ = h.rt.proc.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{Process: h.selector(), Signal: process.Signal_SIGNAL_SIGKILL}))
		},
	}
}

// WaitForExit waits until the whole process group has exited (true), or
// ctx ends first (false, nil). A failed termination attempt is returned as
// the error until a later Terminate succeeds.
func (h *Handle) WaitForExit(ctx context.Context) (bool, error) {
	for {
		h.mu.Lock()
		if h.quiescent {
			h.mu.Unlock()
			return true, nil
		}
		if a := h.attempt; a != nil {
			h.mu.Unlock()
			select {
			case <-a:
				continue
			case <-ctx.Done():
				return false, nil
			}
		}
		if err := h.termFailure; err != nil {
			h.mu.Unlock()
			return false, err
		}
		h.mu.Unlock()

		alive, err := h.rt.control.GroupAlive(ctx, h.pgid)
		switch {
		case err != nil && callerEnded(ctx, err):
			return false, nil
		case err != nil && h.rt.sandboxGone(err):
			h.markQuiescent()
			return true, nil
		case err != nil:
			return false, err
		case !alive:
			h.markQuiescent()
			return true, nil
		}
		t := time.NewTimer(h.rt.cfg.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, nil
		case <-t.C:
		}
	}
}
