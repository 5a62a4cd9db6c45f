package terminal

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/seam/control"
)

// fakeControl is a scriptable control.Plane for cleanup paths a real daemon
// cannot be made to take.
type fakeControl struct {
	mu      sync.Mutex
	groups  func() ([]int, error)
	signal  func(pgid int, sig syscall.Signal) error
	signals []string
}

func (f *fakeControl) Kind() string                                              { return "fake" }
func (f *fakeControl) Processes(context.Context) ([]control.ProcessEntry, error) { return nil, nil }
func (f *fakeControl) GroupAlive(context.Context, int) (bool, error)             { return false, nil }
func (f *fakeControl) SessionGroups(context.Context, int) ([]int, error) {
	return f.groups()
}
func (f *fakeControl) SignalGroup(_ context.Context, pgid int, sig syscall.Signal) (bool, error) {
	f.mu.Lock()
	f.signals = append(f.signals, control.SignalName(sig)+" "+strconv.Itoa(pgid))
	f.mu.Unlock()
	if f.signal != nil {
		return true, f.signal(pgid, sig)
	}
	return true, nil
}
func (f *fakeControl) ForegroundGroup(context.Context, int) (int, bool, bool, error) {
	return 0, false, false, nil
}
func (f *fakeControl) ReadFile(context.Context, string) ([]byte, error) {
	return nil, control.ErrFileNotFound
}
func (f *fakeControl) ReadRange(context.Context, string, int64, int) ([]byte, int64, error) {
	return nil, 0, control.ErrFileNotFound
}
func (f *fakeControl) ListDir(context.Context, string) ([]control.DirEntry, error) { return nil, nil }
func (f *fakeControl) Remove(context.Context, ...string) error                     { return nil }
func (f *fakeControl) AgentStateDirs(context.Context) ([]string, error)            { return nil, nil }

func (f *fakeControl) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.signals...)
}

// exitedTerminal is a handle whose top-level process already exited, so
// Terminate only has the session's other groups to deal with.
func exitedTerminal(cp control.Plane, grace time.Duration, gone func(error) bool) *Terminal {
	t := newTerminal(&Service{Plane: cp, Poll: time.Millisecond, Gone: gone}, 123, "", grace, func() {})
	t.finish(control.ExitOutcome(0), nil)
	return t
}

func TestTerminalCleanupRefusesUnsafeGroupAndCanRetry(t *testing.T) {
	bad := true
	f := &fakeControl{groups: func() ([]int, error) {
		if bad {
			return []int{1, 456}, nil
		}
		return nil, nil
	}}
	term := exitedTerminal(f, 50*time.Millisecond, nil)
	err := term.Terminate(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unsafe process group 1") {
		t.Fatalf("err = %v", err)
	}
	if len(f.sent()) != 0 {
		t.Fatalf("signals sent despite an unsafe group: %v", f.sent())
	}
	bad = false
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatalf("retry: %v", err)
	}
}

func TestTerminalCleanupPropagatesSignalTransportFailure(t *testing.T) {
	fail := true
	left := []int{456}
	var mu sync.Mutex
	f := &fakeControl{
		groups: func() ([]int, error) { mu.Lock(); defer mu.Unlock(); return left, nil },
		signal: func(pgid int, sig syscall.Signal) error {
			if fail {
				return errors.New("transport down")
			}
			mu.Lock()
			left = nil // the group dies on TERM
			mu.Unlock()
			return nil
		},
	}
	term := exitedTerminal(f, 50*time.Millisecond, nil)
	if err := term.Terminate(context.Background()); err == nil || !strings.Contains(err.Error(), "transport down") {
		t.Fatalf("err = %v", err)
	}
	fail = false
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got := f.sent(); len(got) != 2 || got[1] != "SIGTERM 456" {
		t.Fatalf("signals %v", got)
	}
	if err := term.Terminate(context.Background()); err != nil || len(f.sent()) != 2 {
		t.Fatalf("settled terminal signalled again: %v %v", err, f.sent())
	}
}

func TestTerminalCleanupKillsBeforeCheckingAnExpiredDeadline(t *testing.T) {
	f := &fakeControl{groups: func() ([]int, error) { return []int{123, 456}, nil }}
	term := exitedTerminal(f, time.Millisecond, nil)
	err := term.Terminate(context.Background())
	if err == nil || err.Error() != "terminal cleanup failed; surviving process groups: 123, 456" {
		t.Fatalf("err = %v", err)
	}
	got := strings.Join(f.sent(), ",")
	if !strings.HasPrefix(got, "SIGTERM 123,SIGTERM 456,SIGKILL 123,SIGKILL 456") {
		t.Fatalf("signals %s", got)
	}
}

func TestTerminalCleanupTreatsAVanishedSandboxAsSettled(t *testing.T) {
	lost := errors.New("sandbox not found")
	f := &fakeControl{groups: func() ([]int, error) { return nil, lost }}
	term := exitedTerminal(f, 50*time.Millisecond, func(err error) bool { return errors.Is(err, lost) })
	if err := term.Terminate(context.Background()); err != nil {
		t.Fatalf("err = %v", err)
	}
	other := exitedTerminal(&fakeControl{groups: func() ([]int, error) { return nil, errors.New("boom") }}, 50*time.Millisecond,
		func(err error) bool { return errors.Is(err, lost) })
	if err := other.Terminate(context.Background()); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("other failures must stay visible: %v", err)
	}
}
