package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNotRunning says no daemon answers on the socket.
var ErrNotRunning = errors.New("the local sandbox daemon is not running")

// Check reports the running daemon, or ErrNotRunning.
func Check(ctx context.Context, p Paths) (Status, error) {
	h := Probe(ctx, p.Socket())
	st := Status{Socket: p.Socket(), LogFile: p.LogFile(), PID: h.PID}
	if !h.Listening {
		return st, ErrNotRunning
	}
	if !h.Healthy {
		return st, fmt.Errorf("the local sandbox daemon (pid %d) is not healthy: %v", h.PID, h.Err)
	}
	return st, nil
}

// Stop asks the daemon to exit with SIGTERM and waits up to grace, then
// sends SIGKILL. It returns the daemon's pid, or ErrNotRunning. What
// happens to the processes the daemon supervises is the daemon's choice;
// callers that want them gone tear them down first.
func Stop(ctx context.Context, p Paths, grace time.Duration) (int, error) {
	h := Probe(ctx, p.Socket())
	if !h.Listening {
		// A stale socket is not a daemon; tidy it so status is clear.
		_ = os.Remove(p.Socket())
		return 0, ErrNotRunning
	}
	if h.PID <= 0 {
		return 0, fmt.Errorf("cannot tell which process serves %s (another user's?)", p.Socket())
	}
	if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return h.PID, fmt.Errorf("signal daemon pid %d: %w", h.PID, err)
	}
	if !waitGone(ctx, h.PID, grace) {
		_ = syscall.Kill(h.PID, syscall.SIGKILL)
		if !waitGone(ctx, h.PID, 5*time.Second) {
			return h.PID, fmt.Errorf("daemon pid %d is still alive after SIGKILL", h.PID)
		}
	}
	// A daemon killed hard leaves its socket behind.
	if !Probe(ctx, p.Socket()).Listening {
		_ = os.Remove(p.Socket())
	}
	return h.PID, nil
}

// waitGone polls until pid no longer exists (or is a zombie) or the wait
// runs out; it reports whether the process is gone.
func waitGone(ctx context.Context, pid int, wait time.Duration) bool {
	deadline := time.Now().Add(wait)
	for {
		if !alive(pid) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(healthPoll)
	}
}

// alive is true while pid exists and has not finished exiting. A zombie
// whose other threads are still tearing down counts as alive: until the
// last thread is gone its file descriptors (the socket) stay open.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return false
	}
	var state string
	threads := 1
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "State:"); ok {
			state = strings.TrimSpace(v)
		}
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			threads, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return !(strings.HasPrefix(state, "Z") || strings.HasPrefix(state, "X")) || threads > 1
}
