package seam

import (
	"sandtop/backend/seam/control"
	"sandtop/backend/seam/terminal"
)

// The seam is built of smaller packages; the names of theirs that its API
// hands out are repeated here, so a caller imports the seam alone.

// Outcome is how a direct command or a terminal's program ended.
type Outcome = control.Outcome

// Escapee is a process that left its group and was ended with it.
type Escapee = control.Escapee

// ProcessRow is one row of ProcessTable.
type ProcessRow = control.ProcessRow

// The errors of the control plane that callers test for with errors.Is.
var (
	// ErrNotFound: no such process or group in the sandbox.
	ErrNotFound = control.ErrNotFound
	// ErrFileNotFound: a read of the sandbox named a path that does not
	// exist.
	ErrFileNotFound = control.ErrFileNotFound
)

// Terminal is a live PTY session in the sandbox (SpawnTerminal,
// AttachTerminal).
type Terminal = terminal.Terminal

// TerminalSpec describes one terminal session.
type TerminalSpec = terminal.Spec

// TerminalInfo describes one live terminal (ListTerminals).
type TerminalInfo = terminal.Info

// ErrDetached is what a detached handle (a Terminal's or a Handle's)
// answers: the program still runs in the sandbox, this handle no longer
// follows it.
var ErrDetached = terminal.ErrDetached
