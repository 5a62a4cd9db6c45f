package ui

import (
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// Messages that carry the results of Source calls back into Update. Every
// stream-related message carries the generation it was started under, so a
// late answer for something the operator has moved away from is dropped.

// scopedMsg carries a message from one sandbox's Source back to that
// sandbox: Update hands sb to the message's handler (see
// Model.updateScoped).
type scopedMsg struct {
	sb  *sandboxState
	msg tea.Msg
}

// openedMsg is the result of a sandbox's Open.
type openedMsg struct {
	src Source
	err error
}

type infoMsg struct {
	info SandboxInfo
	err  error
}

type watchStartedMsg struct {
	gen int
	ch  <-chan sandbox.Snapshot
	err error
}

type snapshotMsg struct {
	gen  int
	snap sandbox.Snapshot
	ch   <-chan sandbox.Snapshot
}

type watchEndedMsg struct {
	gen int
	err error // why the watch ended, when the source knows
}

// reconnectMsg asks to start watching again after a lost connection.
type reconnectMsg struct{ gen int }

// frameMsg means streamed output is waiting to be drawn.
type frameMsg struct{}

// clockMsg is the slow clock that ages rows and counts teardowns down.
type clockMsg time.Time

type spawnedMsg struct {
	argv       []string
	terminal   bool
	rows, cols int // a terminal's size
	pid        int
	err        error
}

type signalDoneMsg struct {
	sig     syscall.Signal
	pgid    int
	termPid int // non-zero when aimed at a terminal's foreground group
	err     error
}

type teardownMsg struct {
	pgid int
	ev   TeardownEvent
	ch   <-chan teardownUpdate
}

type teardownDoneMsg struct {
	pgid int
	err  error
}

// teardownUpdate is what a teardown goroutine reports.
type teardownUpdate struct {
	ev   TeardownEvent
	done bool
	err  error
}

// openDetailMsg fires after the selection has rested, to open its stream.
type openDetailMsg struct{ gen int }

type outputOpenedMsg struct {
	gen int
	r   OutputStream
	err error
}

type attachedMsg struct {
	gen  int
	pid  int
	conn TerminalConn
	err  error
}

// resizeMsg fires after the layout has rested, to resize the remote PTY.
type resizeMsg struct{ gen int }

type resizeDoneMsg struct {
	pid        int
	rows, cols int
	err        error
}
