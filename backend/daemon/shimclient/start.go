package shimclient

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"sandtop/backend/shim"
)

// Warner is where this package reports what it worked around.
type Warner interface{ Warn(msg string, args ...any) }

// Started is a shim waiting for its stdin and spec.
type Started struct {
	Pid  int
	Conn *net.UnixConn
	gone chan struct{} // closed once it was waited for
}

// Gone is closed once the shim was waited for: its pid is no longer its.
func (s *Started) Gone() <-chan struct{} { return s.gone }

// Discard ends a shim that was never given a group: closing its socket
// makes it return before it did anything.
func (s *Started) Discard() {
	_ = s.Conn.Close()
}

// Start starts a shim, this executable afresh, in its own session with fd
// 3 its socket. run starts cmd (so the caller can register it with its
// reaper first) and returns its pid and a function that waits until it
// was reaped. (The pid is run's to say: cmd.Process.Pid reads -1 once
// run has released the process to reap it otherwise.)
func Start(run func(cmd *exec.Cmd) (pid int, wait func(), err error)) (*Started, error) {
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
	pid, wait, err := run(cmd)
	if err == nil && pid <= 1 {
		// Never a pid to signal: kill(-1) would reach every process of
		// the user.
		err = fmt.Errorf("started with pid %d", pid)
	}
	if err != nil {
		_ = conn.Close()
		return nil, fmt.Errorf("start the shim: %w", err)
	}
	s := &Started{Pid: pid, Conn: conn, gone: make(chan struct{})}
	go func() {
		wait()
		close(s.gone)
	}()
	return s, nil
}

// A shim is this executable started afresh, and a Go program takes a few
// milliseconds to reach its first line: most of a spawn's cost. So the
// daemon keeps one shim started ahead (a spare) once it has run a group,
// and each session-dir Start takes it and starts the next in the
// background. A shim knows nothing of its group until it gets its stdin and
// spec, so any spare serves any Start. An unused spare ends when its socket
// closes, with the daemon.

// Spares keeps one shim started ahead.
type Spares struct {
	start func() (*Started, error)
	log   Warner

	mu    sync.Mutex
	spare *Started
	// starting is closed when the spare being started is there (or
	// failed); nil while none is being started.
	starting chan struct{}
	closed   bool
}

// NewSpares keeps spares that start calls for; none is started before the
// first Take.
func NewSpares(start func() (*Started, error), log Warner) *Spares {
	return &Spares{start: start, log: log}
}

// Take returns the spare when it is still there, else the one being
// started as the spare (it began before a new one would), else a new shim,
// and has the next spare started. (Starting the next one only once the
// Start was answered, so that it would not compete with the answer,
// measured worse: a run right after another then found its spare still
// starting.)
func (p *Spares) Take() (*Started, error) {
	defer p.refill()
	for waited := false; ; waited = true {
		p.mu.Lock()
		s, starting := p.spare, p.starting
		p.spare = nil
		p.mu.Unlock()
		if s != nil {
			select {
			case <-s.gone:
				_ = s.Conn.Close()
			default:
				return s, nil
			}
		}
		if starting == nil || waited {
			return p.start()
		}
		<-starting
	}
}

// refill starts the next spare in the background unless one is there,
// starting, or the pool is closed.
func (p *Spares) refill() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.spare != nil || p.starting != nil || p.closed {
		return
	}
	starting := make(chan struct{})
	p.starting = starting
	go func() {
		s, err := p.start()
		p.mu.Lock()
		defer p.mu.Unlock()
		p.starting = nil
		defer close(starting)
		if err != nil {
			p.log.Warn("spare shim", "err", err)
			return
		}
		if p.spare != nil || p.closed {
			s.Discard()
			return
		}
		p.spare = s
	}()
}

// Close ends the spare and starts no more (at shutdown).
func (p *Spares) Close() {
	p.mu.Lock()
	s := p.spare
	p.spare = nil
	p.closed = true
	p.mu.Unlock()
	if s != nil {
		s.Discard()
	}
}

// Pid is the pid of the spare waiting for the next Take, or 0.
func (p *Spares) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.spare == nil {
		return 0
	}
	return p.spare.Pid
}
