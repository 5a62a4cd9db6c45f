package seam

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"time"

	"sandtop/backend/seam/control"
)

// TeardownPhase names a step of a group teardown.
type TeardownPhase string

const (
	// PhaseTermSent: SIGTERM went to the group.
	PhaseTermSent TeardownPhase = "term-sent"
	// PhaseWaiting: waiting up to the grace for the group to empty.
	PhaseWaiting TeardownPhase = "waiting"
	// PhaseKillSent: SIGKILL went to the group (and the leader fallback).
	PhaseKillSent TeardownPhase = "kill-sent"
	// PhaseEmpty: the group is proven empty (zombies do not count).
	PhaseEmpty TeardownPhase = "empty"
	// PhaseFailed: the group is still live after KILL and the grace.
	PhaseFailed TeardownPhase = "failed"
)

// TeardownEvent reports progress of TeardownGroup.
type TeardownEvent struct {
	Pgid  int
	Phase TeardownPhase
	At    time.Time
	// Deadline is when the current wait gives up (PhaseWaiting and
	// PhaseKillSent).
	Deadline time.Time
	// Err explains PhaseFailed, or a signal that could not be sent.
	Err error
	// Escapees are the processes that had left the group but were still
	// supervised with it (sandtop's daemon only), signalled with it; on
	// PhaseEmpty, every one of them has ended too.
	Escapees []Escapee
}

// treeSignaller is a control plane that can signal a group's escapees
// with it (sandtop's daemon).
type treeSignaller interface {
	SignalTree(ctx context.Context, pgid int, sig syscall.Signal) (bool, []Escapee, error)
}

// signalTree signals the group and, where the plane can, its escapees,
// adding those to seen.
func (r *Runtime) signalTree(ctx context.Context, pgid int, sig syscall.Signal, seen *[]Escapee) error {
	ts, ok := r.control.(treeSignaller)
	if !ok {
		_, err := r.control.SignalGroup(ctx, pgid, sig)
		return err
	}
	_, esc, err := ts.SignalTree(ctx, pgid, sig)
	for _, e := range esc {
		if !slices.ContainsFunc(*seen, func(o Escapee) bool { return o.Pid == e.Pid }) {
			*seen = append(*seen, e)
		}
	}
	return err
}

// tearHooks lets a handle follow the tiers and add its leader fallback.
type tearHooks struct {
	tier       func(sig syscall.Signal)
	leaderKill func(ctx context.Context)
}

// TeardownGroup terminates process group pgid: SIGTERM, up to grace for the
// group to empty, then SIGKILL and up to grace again. A stopped group is not
// continued: the wrapper cannot always tell a stopped child's later SIGTERM
// death from an exit code, while SIGKILL takes the wrapper along and is
// published reliably. It succeeds only on proof that the group is empty
// (a zombie-only group is empty), or when the sandbox is gone. progress, if
// set, sees every phase as it happens. Used by the TUI and `sandtop kill
// --grace`; handles use the same steps.
func (r *Runtime) TeardownGroup(ctx context.Context, pgid int, grace time.Duration, progress func(TeardownEvent)) error {
	if grace <= 0 {
		return fmt.Errorf("teardown grace must be positive (got %v)", grace)
	}
	return r.teardown(ctx, pgid, grace, tearHooks{}, progress)
}

func (r *Runtime) teardown(ctx context.Context, pgid int, grace time.Duration, hooks tearHooks, progress func(TeardownEvent)) error {
	if err := control.CheckGroupID(pgid); err != nil {
		return err
	}
	emit := func(ev TeardownEvent) {
		if progress != nil {
			ev.Pgid, ev.At = pgid, time.Now()
			progress(ev)
		}
	}
	var escapees []Escapee
	empty := func() error { emit(TeardownEvent{Phase: PhaseEmpty, Escapees: escapees}); return nil }

	// TERM tier: any failure here only means escalating.
	if hooks.tier != nil {
		hooks.tier(sigTerm)
	}
	err := r.signalTree(ctx, pgid, sigTerm, &escapees)
	switch {
	case err == nil:
		emit(TeardownEvent{Phase: PhaseTermSent, Escapees: escapees})
		deadline := time.Now().Add(grace)
		emit(TeardownEvent{Phase: PhaseWaiting, Deadline: deadline})
		gone, werr := r.waitGroupEmpty(ctx, pgid, deadline)
		if gone {
			return empty()
		}
		if ctx.Err() != nil {
			return r.teardownFailed(emit, pgid, ctx.Err())
		}
		_ = werr
	case r.sandboxGone(err):
		return empty()
	case ctx.Err() != nil:
		return r.teardownFailed(emit, pgid, ctx.Err())
	default:
		emit(TeardownEvent{Phase: PhaseTermSent, Err: err})
	}

	// KILL tier, plus the leader fallback through envd.
	if hooks.tier != nil {
		hooks.tier(sigKill)
	}
	kerr := r.signalTree(ctx, pgid, sigKill, &escapees)
	if kerr != nil && r.sandboxGone(kerr) {
		return empty()
	}
	if hooks.leaderKill != nil {
		hooks.leaderKill(ctx)
	}
	// SIGKILL cannot be refused, but dying and being reaped takes time on
	// a loaded sandbox: a tiny grace must not turn that into a failure.
	deadline := time.Now().Add(max(grace, control.KillSettle))
	emit(TeardownEvent{Phase: PhaseKillSent, Deadline: deadline, Err: kerr, Escapees: escapees})
	gone, werr := r.waitGroupEmpty(ctx, pgid, deadline)
	if gone {
		return empty()
	}
	failure := fmt.Errorf("remote process group %d remained live after force termination", pgid)
	if werr != nil {
		failure = fmt.Errorf("%w: %w", failure, werr)
	} else if kerr != nil {
		failure = fmt.Errorf("%w: %w", failure, kerr)
	}
	return r.teardownFailed(emit, pgid, failure)
}

func (r *Runtime) teardownFailed(emit func(TeardownEvent), pgid int, err error) error {
	emit(TeardownEvent{Phase: PhaseFailed, Err: err})
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("teardown of process group %d interrupted: %w", pgid, err)
	}
	return err
}

// waitGroupEmpty polls until pgid has no live member (true), the deadline
// passes, or ctx ends. The last probe runs at the deadline. A lost sandbox
// counts as empty.
func (r *Runtime) waitGroupEmpty(ctx context.Context, pgid int, deadline time.Time) (bool, error) {
	var lastErr error
	// Most groups empty within milliseconds of their signal. On sandtop's
	// daemon, where a look reads only the group's subtree, the first looks
	// come quickly and the interval doubles up to PollInterval; on stock
	// envd each look is a command, so it keeps PollInterval.
	wait := r.cfg.PollInterval
	ext, isExt := r.control.(control.Extension)
	if isExt {
		wait = min(teardownFirstPoll, wait)
	}
	// A daemon that can wait for the group itself answers the moment it is
	// empty, with no polls over the wire.
	serverWait := isExt && slices.Contains(r.info.Capabilities, capWaitEmpty)
	for {
		var alive bool
		var err error
		if serverWait {
			alive, err = ext.GroupAliveAfter(ctx, pgid, max(time.Until(deadline), 0))
		} else {
			alive, err = r.control.GroupAlive(ctx, pgid)
		}
		switch {
		case err == nil && !alive:
			return true, nil
		case err != nil && ctx.Err() != nil:
			return false, ctx.Err()
		case err != nil && r.sandboxGone(err):
			return true, nil
		case err != nil:
			lastErr = err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false, lastErr
		}
		if serverWait && err == nil {
			continue // the daemon's wait ended early (its own bound): ask again
		}
		t := time.NewTimer(min(left, wait))
		wait = min(2*wait, r.cfg.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, ctx.Err()
		case <-t.C:
		}
	}
}

// capWaitEmpty: the daemon honours ListGroupsRequest.wait_empty_ms.
const capWaitEmpty = "wait-empty"

// teardownFirstPoll is the first wait for a signalled group to empty.
const teardownFirstPoll = 2 * time.Millisecond
