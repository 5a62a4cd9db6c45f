package terminal

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/seam/control"
)

// Spec describes one terminal session. Every field is explicit.
type Spec struct {
	// Argv is the program and its arguments; it is never shell-interpreted.
	Argv []string
	// Cwd is the working directory in the sandbox.
	Cwd string
	// Env entries are layered over the sandbox's scrubbed base environment.
	Env map[string]string
	// Rows and Cols are the PTY's size before the program's first byte.
	Rows, Cols int
	// Grace is the TERM→KILL grace Terminate gives the whole session:
	// positive, at most control.MaxGrace.
	Grace time.Duration
	// Tag is an optional label (one line, at most MaxTagBytes). It rides in
	// the terminal's daemon tag after sandtop's own fields, so listings
	// report it, after a restart too.
	Tag string
}

// Foreground is the terminal's foreground process group.
type Foreground struct {
	// Pgid is the terminal driver's foreground process group (tpgid).
	Pgid int
	// InputWaiting is true only when the daemon has proven that the group is
	// blocked reading the terminal. Without the extension it is always false.
	InputWaiting bool
}

// errTerminalExited rejects input once the top-level process has exited.
var errTerminalExited = errors.New("terminal process has exited")

// ErrDetached is what a detached handle (a Terminal's or a Handle's)
// answers: the program still runs in the sandbox, this handle no longer
// follows it.
var ErrDetached = errors.New("detached (it keeps running)")

// Terminal is a live PTY session in the sandbox. Its methods are safe for
// concurrent use.
type Terminal struct {
	rt    *Service
	pid   int
	id    string // state directory name under <runtimeRoot>/terminals
	grace time.Duration

	output *terminalOutput
	input  terminalInput
	ops    *terminalOps
	stop   context.CancelFunc // ends the output subscription

	done    chan struct{}
	outcome control.Outcome
	err     error // transport failure; both are set before done closes

	termMu  sync.Mutex // one Terminate attempt at a time
	settled bool       // the session was proven empty

	sigMu   sync.Mutex
	termSig syscall.Signal // the last tier Terminate sent

	detached atomic.Bool // Detach was called
}

func newTerminal(rt *Service, pid int, id string, grace time.Duration, stop context.CancelFunc) *Terminal {
	return &Terminal{
		rt: rt, pid: pid, id: id, grace: grace,
		input:  terminalInput{useStr: rt.Supervisor != nil},
		output: newTerminalOutput(DefaultOutputBuffer),
		ops:    newTerminalOps(),
		stop:   stop,
		done:   make(chan struct{}),
	}
}

func (t *Terminal) requestSignal(sig syscall.Signal) {
	t.sigMu.Lock()
	t.termSig = sig
	t.sigMu.Unlock()
}

func (t *Terminal) requestedSignal() syscall.Signal {
	t.sigMu.Lock()
	defer t.sigMu.Unlock()
	return t.termSig
}

// Pid is the terminal's top-level process id (also its session id).
func (t *Terminal) Pid() int { return t.pid }

// ID names the terminal's state directory under <runtimeRoot>/terminals/.
func (t *Terminal) ID() string { return t.id }

// Grace is the TERM→KILL grace Terminate uses.
func (t *Terminal) Grace() time.Duration { return t.grace }

// Output is the program's raw terminal bytes in delivery order. It returns
// io.EOF after the queued bytes once the top-level process has exited, or
// the transport error if the stream broke. A consumer that falls more than
// DefaultOutputBuffer bytes behind loses the oldest bytes.
func (t *Terminal) Output() io.Reader { return t.output }

// Done is closed when the top-level process has exited (or the transport
// failed); Outcome is valid then.
func (t *Terminal) Done() <-chan struct{} { return t.done }

// Outcome reports how the top-level process ended. It returns an error if
// the process has not exited yet or the transport failed.
func (t *Terminal) Outcome() (control.Outcome, error) {
	select {
	case <-t.done:
		return t.outcome, t.err
	default:
		return control.Outcome{}, errors.New("terminal process is still running")
	}
}

func (t *Terminal) exited() bool {
	select {
	case <-t.done:
		return true
	default:
		return false
	}
}

// Detached reports whether Detach was called.
func (t *Terminal) Detached() bool { return t.detached.Load() }

// gone is why a handle whose stream has ended takes no more input.
func (t *Terminal) gone() error {
	if t.detached.Load() {
		return ErrDetached
	}
	return errTerminalExited
}

// Detach lets go of the terminal without ending it, as tmux's detach does:
// the output subscription ends (Output reads ErrDetached after what was
// queued, Done closes), Write and Resize answer ErrDetached, and the
// seam's Runtime no longer owns it, so neither its release nor its disposal
// will terminate it. Attach it again with AttachTerminal.
func (t *Terminal) Detach() {
	if t.detached.Swap(true) {
		return
	}
	t.stop()
}

// Write delivers data to the terminal's input exactly as given: no newline
// conversion. It fails once the top-level process has exited.
func (t *Terminal) Write(ctx context.Context, data []byte) error {
	if t.exited() {
		return t.gone()
	}
	ctx, end, err := t.ops.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	if len(data) == 0 {
		return nil
	}
	if err := t.send(ctx, data); err != nil {
		if t.exited() {
			return t.gone()
		}
		return opError(ctx, fmt.Errorf("terminal write: %w", err))
	}
	return nil
}

// Resize changes the PTY's size; the foreground program gets SIGWINCH.
func (t *Terminal) Resize(ctx context.Context, rows, cols int) error {
	if err := checkTerminalSize(rows, cols); err != nil {
		return err
	}
	if t.exited() {
		return t.gone()
	}
	ctx, end, err := t.ops.begin(ctx)
	if err != nil {
		return err
	}
	defer end()
	_, err = t.rt.Process.Update(ctx, connect.NewRequest(&process.UpdateRequest{
		Process: pidSelector(t.pid),
		Pty:     ptySize(rows, cols),
	}))
	if err != nil {
		if t.exited() {
			return t.gone()
		}
		return opError(ctx, fmt.Errorf("terminal resize: %w", err))
	}
	return nil
}

// InspectForeground returns the terminal's foreground group, or nil when it
// cannot be resolved, e.g. after the top-level process exited.
func (t *Terminal) InspectForeground(ctx context.Context) (*Foreground, error) {
	if t.exited() {
		return nil, nil
	}
	ctx, end, err := t.ops.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer end()
	return t.inspect(ctx)
}

func (t *Terminal) inspect(ctx context.Context) (*Foreground, error) {
	if t.exited() {
		return nil, nil
	}
	pgid, waiting, ok, err := t.rt.Plane.ForegroundGroup(ctx, t.pid)
	if err != nil {
		if t.exited() {
			return nil, nil
		}
		return nil, opError(ctx, err)
	}
	if !ok || t.exited() {
		return nil, nil
	}
	if pgid <= 1 {
		return nil, fmt.Errorf("cannot resolve foreground process group: got %d", pgid)
	}
	return &Foreground{Pgid: pgid, InputWaiting: waiting}, nil
}

// SignalForeground sends sig (SIGINT, SIGTERM, SIGKILL, SIGTSTP or SIGHUP)
// to the terminal's foreground process group and returns that group's id.
// SIGKILL to the shell's own group is refused: Terminate ends the session.
func (t *Terminal) SignalForeground(ctx context.Context, sig syscall.Signal) (int, error) {
	if !foregroundSignals[sig] {
		return 0, fmt.Errorf("terminal signal %v is not one of SIGINT, SIGTERM, SIGKILL, SIGTSTP, SIGHUP", sig)
	}
	if t.exited() {
		return 0, errors.New("cannot resolve foreground process group: terminal process has exited")
	}
	ctx, end, err := t.ops.begin(ctx)
	if err != nil {
		return 0, err
	}
	defer end()
	fg, err := t.inspect(ctx)
	if err != nil {
		return 0, err
	}
	if fg == nil {
		return 0, errors.New("cannot resolve foreground process group")
	}
	if sig == syscall.SIGKILL && fg.Pgid == t.pid {
		return 0, errors.New("refusing to SIGKILL the terminal shell; terminate the terminal session instead")
	}
	if _, err := t.rt.Plane.SignalGroup(ctx, fg.Pgid, sig); err != nil {
		return 0, opError(ctx, fmt.Errorf("%s to foreground group %d: %w", control.SignalName(sig), fg.Pgid, err))
	}
	return fg.Pgid, nil
}

var foregroundSignals = map[syscall.Signal]bool{
	syscall.SIGINT: true, syscall.SIGTERM: true, syscall.SIGKILL: true,
	syscall.SIGTSTP: true, syscall.SIGHUP: true,
}

func pidSelector(pid int) *process.ProcessSelector {
	return &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(pid)}}
}

func ptySize(rows, cols int) *process.PTY {
	return &process.PTY{Size: &process.PTY_Size{Rows: uint32(rows), Cols: uint32(cols)}}
}

// checkTerminalSize accepts what a winsize can hold.
func checkTerminalSize(rows, cols int) error {
	if rows < 1 || rows > 0xffff || cols < 1 || cols > 0xffff {
		return fmt.Errorf("terminal size %dx%d (rows x cols) must be within 1..65535", rows, cols)
	}
	return nil
}
