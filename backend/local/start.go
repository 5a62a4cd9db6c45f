package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// DefaultStartTimeout bounds how long EnsureRunning waits for a new daemon
// to answer /health.
const DefaultStartTimeout = 15 * time.Second

// healthPoll is how often a starter probes a daemon it just started.
const healthPoll = 25 * time.Millisecond

// Options configure EnsureRunning.
type Options struct {
	Paths Paths
	// Executable is the sandtop binary to re-exec as "sandtop serve".
	// Empty means this process's own executable.
	Executable string
	// ServeArgs are extra arguments appended to "sandtop serve".
	ServeArgs []string
	// StartTimeout bounds the wait for a new daemon; zero means
	// DefaultStartTimeout.
	StartTimeout time.Duration
	// Environ is the environment the daemon's curated one is taken from;
	// nil means os.Environ().
	Environ []string
	// Suspect says the caller's own call just found the daemon not
	// answering (see Unchecked): the probe before taking the start lock is
	// skipped, leaving the one under the lock.
	Suspect bool
}

// Status describes the running local daemon.
type Status struct {
	Socket  string
	PID     int
	LogFile string
	// Started is true when this call started the daemon.
	Started bool
}

// EnsureRunning returns the local daemon, starting it if none answers. It
// is safe to call from many processes at once: exactly one starts the
// daemon and the others wait for it.
func EnsureRunning(ctx context.Context, opts Options) (Status, error) {
	p := opts.Paths
	if err := p.Prepare(); err != nil {
		return Status{}, err
	}
	st := Status{Socket: p.Socket(), LogFile: p.LogFile()}
	if !opts.Suspect {
		if h := Probe(ctx, p.Socket()); h.Healthy {
			st.PID = h.PID
			return st, nil
		}
	}
	timeout := opts.StartTimeout
	if timeout <= 0 {
		timeout = DefaultStartTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	lock, err := acquireStartLock(ctx, p.LockFile())
	if err != nil {
		return Status{}, err
	}
	defer lock.release()
	// Someone may have started it while we waited for the lock.
	h := Probe(ctx, p.Socket())
	if h.Healthy {
		st.PID = h.PID
		return st, nil
	}
	if err := clearStaleSocket(ctx, p.Socket(), h); err != nil {
		return Status{}, err
	}
	pid, err := startDaemon(ctx, opts)
	if err != nil {
		return Status{}, err
	}
	st.PID, st.Started = pid, true
	return st, nil
}

// Unchecked returns where the local daemon listens, preparing its
// directories (and refusing ones that are not private) without asking the
// daemon anything: a probe is a connection and a request of its own. It is
// for a caller whose first call to the daemon stands in for the health
// check, bounded by ProbeTimeout, and who calls EnsureRunning when that
// call fails: EnsureRunning starts a daemon that is not there and replaces
// one that accepts but does not answer.
func Unchecked(opts Options) (Status, error) {
	p := opts.Paths
	if err := p.Prepare(); err != nil {
		return Status{}, err
	}
	return Status{Socket: p.Socket(), LogFile: p.LogFile()}, nil
}

// clearStaleSocket removes a socket nobody healthy answers on (h is the
// probe that found it so). A daemon that accepts but fails /health is
// wedged: it is stopped first, so it does not linger unreachable once its
// socket is gone. Its non-terminal processes outlive it.
func clearStaleSocket(ctx context.Context, socket string, h Health) error {
	if h.Listening && h.PID > 0 {
		_ = syscall.Kill(h.PID, syscall.SIGTERM)
		if !waitGone(ctx, h.PID, time.Second) {
			_ = syscall.Kill(h.PID, syscall.SIGKILL)
			waitGone(ctx, h.PID, 2*time.Second)
		}
	}
	if err := os.Remove(socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("remove stale socket: %w", err)
	}
	return nil
}

// startDaemon re-execs sandtop as a detached "serve" in its own session,
// with stdio going to the log file, and waits for it to answer /health.
func startDaemon(ctx context.Context, opts Options) (int, error) {
	p := opts.Paths
	exe := opts.Executable
	if exe == "" {
		var err error
		if exe, err = os.Executable(); err != nil {
			return 0, fmt.Errorf("find the sandtop binary to start the daemon: %w", err)
		}
	}
	logf, err := os.OpenFile(p.LogFile(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return 0, fmt.Errorf("open daemon log: %w", err)
	}
	defer logf.Close()
	logStart, _ := logf.Seek(0, 2)
	fmt.Fprintf(logf, "--- %s sandtop: starting the local sandbox daemon\n", time.Now().Format(time.RFC3339))

	environ := opts.Environ
	if environ == nil {
		environ = os.Environ()
	}
	args := append([]string{"serve", "--listen", p.Target(), "--state-dir", p.StateDir}, opts.ServeArgs...)
	// Not exec.CommandContext: the daemon must outlive this call.
	cmd := exec.Command(exe, args...)
	cmd.Env = CuratedEnv(environ)
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start the local sandbox daemon: %w", err)
	}
	exited := make(chan error, 1)
	// Reap the daemon whenever it exits, so it never lingers as a zombie
	// of a long-lived client.
	go func() { exited <- cmd.Wait() }()

	tick := time.NewTicker(healthPoll)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return 0, fmt.Errorf("the local sandbox daemon exited while starting (%v)%s", err, logTail(p.LogFile(), logStart))
		case <-ctx.Done():
			_ = cmd.Process.Kill()
			return 0, fmt.Errorf("the local sandbox daemon did not answer on %s in time%s", p.Socket(), logTail(p.LogFile(), logStart))
		case <-tick.C:
			if h := Probe(ctx, p.Socket()); h.Healthy && h.PID == cmd.Process.Pid {
				return h.PID, nil
			}
		}
	}
}

// logTail returns the last lines the daemon wrote since offset, formatted
// to follow an error message.
func logTail(path string, offset int64) string {
	b, err := os.ReadFile(path)
	if err != nil || int64(len(b)) <= offset {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b[offset:])), "\n")
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return "; daemon log " + path + ":\n  " + strings.Join(lines, "\n  ")
}
