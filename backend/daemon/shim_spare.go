package daemon

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"

	"sandtop/backend/shim"
)

// A shim is this executable started afresh, and a Go program takes a few
// milliseconds to reach its first line: most of a spawn's cost. So the
// daemon keeps one shim started ahead (a spare) once it has run a group,
// and each session-dir Start takes it and starts the next in the
// background. A shim knows nothing of its group until it gets its stdin and
// spec, so any spare serves any Start. An unused spare ends when its socket
// closes, with the daemon.

// startedShim is a shim waiting for its stdin and spec.
type startedShim struct {
	pid  int
	conn *net.UnixConn
	gone chan struct{} // closed once it was waited for
}

// startShim starts a shim in its own session with fd 3 its socket.
func (d *Daemon) startShim() (*startedShim, error) {
	if !shim.Entered() {
		// Else /proc/self/exe, started as a shim, would run its own main.
		return nil, errors.New("start the shim: this executable does not serve as a shim (its main, or TestMain, must call shim.RunIfSubcommand first)")
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("shim socket: %w", err)
	}
	ours, theirs := os.NewFile(uintptr(fds[0]), "shim"), os.NewFile(uintptr(fds[1]), "daemon")
	defer theirs.Close()
	fc, err := net.FileConn(ours)
	_ = ours.Close()
	if err != nil {
		return nil, fmt.Errorf("shim socket: %w", err)
	}
	conn := fc.(*net.UnixConn)
	cmd := &exec.Cmd{
		Path: "/proc/self/exe",
		Args: []string{"sandtop-shim", shim.Subcommand},
		// Nothing of the daemon's environment; one P is all a shim needs.
		Env:         []string{"GOMAXPROCS=1"},
		Dir:         "/",
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Setsid: true},
	}
	err = theReaper.starting(func() error {
		if err := cmd.Start(); err != nil {
			return err
		}
		d.reg.markShimChild(cmd.Process.Pid, true)
		return nil
	})
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("start the shim: %w", err)
	}
	s := &startedShim{pid: cmd.Process.Pid, conn: conn, gone: make(chan struct{})}
	// The shim's status says nothing (the program's comes over conn): it
	// only has to be reaped, and without a thread per shim.
	wait, err := reapWithoutThread(s.pid)
	if err != nil {
		wait = func() { _ = cmd.Wait() }
	} else {
		_ = cmd.Process.Release()
	}
	go func() {
		wait()
		d.reg.markShimChild(s.pid, false)
		close(s.gone)
	}()
	return s, nil
}

// takeShim returns the spare when it is still there, else the one being
// started as the spare (it began before a new one would), else a new shim,
// and has the next spare started. (Starting the next one only once the
// Start was answered, so that it would not compete with the answer,
// measured worse: a run right after another then found its spare still
// starting.)
func (d *Daemon) takeShim() (*startedShim, error) {
	defer d.refillSpare()
	for waited := false; ; waited = true {
		d.spareMu.Lock()
		s, starting := d.spare, d.spareStarting
		d.spare = nil
		d.spareMu.Unlock()
		if s != nil {
			select {
			case <-s.gone:
				_ = s.conn.Close()
			default:
				return s, nil
			}
		}
		if starting == nil || waited {
			return d.startShim()
		}
		<-starting
	}
}

// refillSpare starts the next spare in the background unless one is there,
// starting, or the daemon is shutting down.
func (d *Daemon) refillSpare() {
	d.spareMu.Lock()
	defer d.spareMu.Unlock()
	if d.spare != nil || d.spareStarting != nil || d.isShuttingDown() {
		return
	}
	starting := make(chan struct{})
	d.spareStarting = starting
	go func() {
		s, err := d.startShim()
		d.spareMu.Lock()
		defer d.spareMu.Unlock()
		d.spareStarting = nil
		defer close(starting)
		if err != nil {
			d.log.Warn("spare shim", "err", err)
			return
		}
		if d.spare != nil || d.isShuttingDown() {
			s.discard()
			return
		}
		d.spare = s
	}()
}

// dropSpare ends the spare (at shutdown).
func (d *Daemon) dropSpare() {
	d.spareMu.Lock()
	s := d.spare
	d.spare = nil
	d.spareMu.Unlock()
	if s != nil {
		s.discard()
	}
}

// discard ends a shim that was never given a group: closing its socket
// makes it return before it did anything.
func (s *startedShim) discard() {
	_ = s.conn.Close()
}

func (d *Daemon) isShuttingDown() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}
