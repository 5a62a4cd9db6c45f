package terminal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/seam/control"
)

// exitStatusTimeout bounds small best-effort calls made outside a caller's
// context.
const exitStatusTimeout = 5 * time.Second

// Terminate ends the whole terminal session and waits until it is empty. It
// first refuses new calls and cancels and joins those in flight, then sends
// SIGTERM to every process group of the session, waits up to the grace, and
// sends SIGKILL to whatever is left (a group made only of zombies counts as
// gone). It returns once the session is empty and the top-level process has
// exited. It is idempotent; after a failure (including ctx ending) it may be
// called again.
func (t *Terminal) Terminate(ctx context.Context) error {
	t.ops.closeAndJoin()
	t.termMu.Lock()
	defer t.termMu.Unlock()
	if t.settled {
		return nil
	}
	if err := t.emptySession(ctx); err != nil {
		// A sandbox that no longer exists runs nothing: that is settled.
		if ctx.Err() != nil || t.rt.Gone == nil || !t.rt.Gone(err) {
			return err
		}
	}
	t.settled = true
	t.stop()
	// The runner deleted its private files long ago; the empty directory
	// is all that is left. Failing to remove it does not revive anything.
	rmCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), exitStatusTimeout)
	defer cancel()
	_ = t.rt.removeState(rmCtx, t.id)
	return nil
}

// emptySession is one teardown attempt: TERM, grace, KILL, proof.
func (t *Terminal) emptySession(ctx context.Context) error {
	grace := t.grace
	groups, err := t.sessionGroups(ctx)
	if err != nil {
		return fmt.Errorf("terminal cleanup: %w", err)
	}
	if len(groups) > 0 {
		t.requestSignal(syscall.SIGTERM)
		if err := t.signalGroups(ctx, groups, syscall.SIGTERM); err != nil {
			return fmt.Errorf("terminal cleanup: %w", err)
		}
		groups, err = t.waitEmpty(ctx, time.Now().Add(grace))
		if err != nil {
			return err
		}
	} else if !t.exited() {
		if err := t.waitDone(ctx, grace); err != nil {
			return err
		}
	}
	if len(groups) == 0 && t.exited() {
		return nil
	}

	t.requestSignal(syscall.SIGKILL)
	if !t.exited() {
		// Independent of the group list: envd's own kill of the leader.
		_, err := t.rt.Process.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{
			Process: pidSelector(t.pid), Signal: process.Signal_SIGNAL_SIGKILL,
		}))
		if err != nil && !t.exited() && connect.CodeOf(err) != connect.CodeNotFound {
			return fmt.Errorf("terminal cleanup: SIGKILL to pid %d: %w", t.pid, err)
		}
	}
	// SIGKILL cannot be caught, but delivery and reaping take a moment; a
	// tiny grace must not turn that moment into a reported failure.
	settle := max(grace, control.KillSettle)
	deadline := time.Now().Add(settle)
	for {
		groups, err = t.sessionGroups(ctx)
		if err != nil {
			return fmt.Errorf("terminal cleanup: %w", err)
		}
		if len(groups) == 0 {
			break
		}
		// KILL goes out before the deadline is checked, so a zero grace
		// still gets one round.
		if err := t.signalGroups(ctx, groups, syscall.SIGKILL); err != nil {
			return fmt.Errorf("terminal cleanup: %w", err)
		}
		if time.Now().After(deadline) {
			break
		}
		if err := t.sleep(ctx, t.rt.pollInterval()); err != nil {
			return err
		}
	}
	if err := t.waitDone(ctx, settle); err != nil {
		return err
	}
	switch {
	case len(groups) > 0:
		return fmt.Errorf("terminal cleanup failed; surviving process groups: %s", joinInts(groups))
	case !t.exited():
		return fmt.Errorf("terminal cleanup failed; surviving pid: %d", t.pid)
	}
	return nil
}

// waitEmpty polls the session until it has no live group or the deadline
// passes, and returns the groups still alive.
func (t *Terminal) waitEmpty(ctx context.Context, deadline time.Time) ([]int, error) {
	for {
		groups, err := t.sessionGroups(ctx)
		if err != nil {
			return nil, fmt.Errorf("terminal cleanup: %w", err)
		}
		if len(groups) == 0 || !time.Now().Before(deadline) {
			return groups, nil
		}
		if err := t.sleep(ctx, min(t.rt.pollInterval(), time.Until(deadline))); err != nil {
			return nil, err
		}
	}
}

// waitDone waits up to d for the top-level process's exit to be reported.
// A timeout is not an error here; the caller checks what survived.
func (t *Terminal) waitDone(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-t.done:
	case <-timer.C:
	case <-ctx.Done():
		return fmt.Errorf("terminal cleanup interrupted: %w", ctx.Err())
	}
	return nil
}

func (t *Terminal) sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(max(d, time.Millisecond))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("terminal cleanup interrupted: %w", ctx.Err())
	}
}

// sessionGroups lists the session's groups that still have a live member.
// The terminal's pid leads its session: the PTY child is started with
// setsid, on envd and on sandtop's daemon alike.
func (t *Terminal) sessionGroups(ctx context.Context) ([]int, error) {
	groups, err := t.rt.Plane.SessionGroups(ctx, t.pid)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if g <= 1 {
			return nil, fmt.Errorf("unsafe process group %d in terminal session %d", g, t.pid)
		}
	}
	return groups, nil
}

// signalGroups signals every group; one already gone is not an error, a
// transport failure is (Terminate can be retried).
func (t *Terminal) signalGroups(ctx context.Context, groups []int, sig syscall.Signal) error {
	var errs []error
	for _, g := range groups {
		if _, err := t.rt.Plane.SignalGroup(ctx, g, sig); err != nil {
			errs = append(errs, fmt.Errorf("%s to process group %d: %w", control.SignalName(sig), g, err))
		}
	}
	return errors.Join(errs...)
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ", ")
}
