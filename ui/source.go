package ui

import (
	"context"
	"io"
	"syscall"
	"time"

	"sandtop/sandbox"
)

// Source is everything the TUI needs from one sandbox: what it runs in
// package sandbox's model, and the TUI's own terms for the rest. One Source
// per sandbox; Options leaves room for several later.
// Every method may block on the network, so the model only calls them from
// tea.Cmds, never from Update.
type Source interface {
	// Info describes the sandbox and the daemon serving it.
	Info(ctx context.Context) (SandboxInfo, error)
	// Watch delivers a snapshot now and another whenever the process table
	// changes, until ctx ends; the channel is closed then or when the
	// connection is lost (the error of the loss is returned by Err).
	Watch(ctx context.Context) (<-chan sandbox.Snapshot, error)
	// Spawn starts argv (never through a shell) as a new process group.
	Spawn(ctx context.Context, argv []string, cwd string) (pid int, err error)
	// SpawnTerminal starts argv on a new PTY that already has the given size,
	// so the program's first byte is laid out for the pane it appears in.
	SpawnTerminal(ctx context.Context, argv []string, rows, cols int) (pid int, err error)
	// Attach connects to a terminal: its output replays recent bytes and
	// then goes live; Close detaches and never signals the program.
	Attach(ctx context.Context, pid int) (TerminalConn, error)
	// Output streams a group leader's output (what is kept or replayed,
	// then live), each piece with its arrival time in the sandbox where
	// the sandbox kept one.
	Output(ctx context.Context, pid int) (OutputStream, error)
	// Signal sends sig to every member of process group pgid.
	Signal(ctx context.Context, pgid int, sig syscall.Signal) error
	// SignalForeground sends sig to the foreground group of a terminal and
	// says which group that was.
	SignalForeground(ctx context.Context, termPid int, sig syscall.Signal) (pgid int, err error)
	// Teardown sends SIGTERM to the group, waits up to grace, sends SIGKILL
	// if members remain, and returns once the group is proven empty.
	// progress is called (from the Source's goroutine) at each step.
	Teardown(ctx context.Context, pgid int, grace time.Duration, progress func(TeardownEvent)) error
}

// GroupDetails are what only a group's state directory tells: its working
// directory and when it started and ended (zero where not known).
type GroupDetails struct {
	Cwd            string
	Started, Ended time.Time
}

// GroupDescriber is a Source that can read a group's details, which the
// describe view asks for once when it opens. It stands apart from Source,
// whose methods are what every sandbox must serve: a Source without it
// describes groups from the listing alone.
type GroupDescriber interface {
	GroupDetails(ctx context.Context, stateDir string) (GroupDetails, error)
}

// OutputStream is a group's output in the order it arrived.
type OutputStream interface {
	// Next blocks for the next piece of output; io.EOF once it has
	// ended. The piece's Data may be reused by the following call.
	Next() (OutputPiece, error)
	// Close stops the stream; the group is not touched.
	Close() error
}

// OutputPiece is some output and when it arrived in the sandbox. At is
// zero when the sandbox kept no time for it (a replay buffer, a stock
// envd's stream): the pane then stamps it with when it reached the TUI
// and says its times are as received.
type OutputPiece struct {
	At   time.Time
	Data []byte
}

// ReaderStream makes an untimed byte stream an OutputStream: every piece
// comes without a time.
func ReaderStream(r io.ReadCloser) OutputStream {
	return &readerStream{r: r, buf: make([]byte, 32<<10)}
}

type readerStream struct {
	r   io.ReadCloser
	buf []byte
}

func (s *readerStream) Next() (OutputPiece, error) {
	for {
		n, err := s.r.Read(s.buf)
		if n > 0 || err != nil {
			return OutputPiece{Data: s.buf[:n]}, err
		}
	}
}

func (s *readerStream) Close() error { return s.r.Close() }

// TerminalConn is an attached terminal.
type TerminalConn interface {
	io.Reader // replay, then live output
	io.Writer // input bytes, delivered in order
	Resize(rows, cols int) error
	// Close detaches; the remote program keeps running.
	Close() error
}

// SandboxInfo is what the header shows.
type SandboxInfo struct {
	Name         string
	Target       string // where we are connected, e.g. unix:/run/sandtop.sock
	Version      string
	Capabilities []string
	Hostname     string
}

// TeardownPhase is a step of a teardown.
type TeardownPhase int

const (
	TeardownTerm    TeardownPhase = iota // SIGTERM sent
	TeardownWaiting                      // waiting out the grace; Remaining counts down
	TeardownKill                         // SIGKILL sent
	TeardownEmpty                        // group proven empty
	TeardownFailed                       // gave up; Err says why
)

func (p TeardownPhase) String() string {
	return [...]string{"SIGTERM", "waiting", "SIGKILL", "empty", "failed"}[p]
}

// TeardownEvent is one progress report of a teardown.
type TeardownEvent struct {
	PGID      int
	Phase     TeardownPhase
	Remaining time.Duration // grace left, while waiting
	Members   int           // live members left, when known
	Err       error
}
