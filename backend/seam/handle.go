package seam

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"sandtop/backend/gen/process"
)

// Handle is one spawned (or adopted) process group. Its methods are safe
// for concurrent use.
type Handle struct {
	// Stdin is set in stdin pipe mode: writes go to the program in order;
	// Close sends EOF.
	Stdin io.WriteCloser
	// Stdout and Stderr are set in pipe mode: the raw stream. Closing one
	// discards the rest of that stream.
	Stdout, Stderr io.ReadCloser
	// Collected holds a reader per stream in collect mode. Readers stay
	// readable after the process settles.
	Collected Collected

	rt       *Runtime
	id       string
	stateDir string
	grace    time.Duration
	// startPid is the pid of the Start event: the wrapper's outer half or
	// the standalone supervisor, or with direct the program itself.
	startPid atomic.Int64
	// underShim: sandtop's daemon runs the group under its shim, with no
	// wrapper, and the start event publishes the group (its pid is the
	// program's, the pgid).
	underShim bool
	// supervised: sandtop's supervisor runs the group on stock envd; it is
	// not in the group and leaves once the program has ended.
	supervised bool
	pgid       int

	modes      Stdio
	outPipe    *outputPipe
	errPipe    *outputPipe
	stopStream context.CancelFunc
	inherit    *inheritQueue // inherited output on its way to the host

	streamDone chan struct{} // closed when the Start stream is over
	end        *process.ProcessEvent_EndEvent
	streamErr  error

	done       chan struct{}
	outcome    Outcome
	outcomeErr error

	// detached: Detach let go of the group (see there).
	detached atomic.Bool

	mu            sync.Mutex
	termRequested bool
	termTier      syscall.Signal // last tier of a requested termination
	attempt       chan struct{}  // closed when the running attempt ends
	termFailure   error
	quiescent     bool
}

// Collected are the collect-mode readers; nil for other modes.
type Collected struct {
	Stdout, Stderr *OutputReader
}

// ID is the state directory's name under <runtimeRoot>/processes/.
func (h *Handle) ID() string { return h.id }

// StateDir is the private state directory in the sandbox.
func (h *Handle) StateDir() string { return h.stateDir }

// Pid is the pid of the tree root: the leader of the process group the
// wrapper published. It is real as soon as Spawn returns.
func (h *Handle) Pid() int { return h.pgid }

// Pgid is the process group every descendant starts in.
func (h *Handle) Pgid() int { return h.pgid }

// StartPid is the pid process.Process/Start reported (the wrapper's outer
// shell, the standalone supervisor, or on sandtop's daemon the program),
// which envd-level tools show.
func (h *Handle) StartPid() int { return int(h.startPid.Load()) }

// Done is closed once the outcome is settled.
func (h *Handle) Done() <-chan struct{} { return h.done }

// Outcome is how the direct command ended, valid once Done is closed. The
// error is set only for failures of the transport, never for a non-zero
// exit or a signal.
func (h *Handle) Outcome() (Outcome, error) {
	select {
	case <-h.done:
		return h.outcome, h.outcomeErr
	default:
		return Outcome{}, errNotSettled
	}
}

func (h *Handle) terminationRequested() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.termRequested
}

func (h *Handle) tier() syscall.Signal {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.termTier
}

func (h *Handle) setTier(sig syscall.Signal) {
	h.mu.Lock()
	h.termTier = sig
	h.mu.Unlock()
}

// markQuiescent records proof that the group is empty: from now on every
// Terminate is a no-op, because the pgid may be reused.
func (h *Handle) markQuiescent() {
	h.mu.Lock()
	h.quiescent = true
	h.termFailure = nil
	h.mu.Unlock()
}

func (h *Handle) streamEnded() bool {
	select {
	case <-h.streamDone:
		return true
	default:
		return false
	}
}

var errNotSettled = errorString("outcome is not settled yet")

type errorString string

func (e errorString) Error() string { return string(e) }
