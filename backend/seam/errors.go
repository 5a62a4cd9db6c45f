package seam

import "errors"

// Errors callers can test for with errors.Is, so that no front-end has to
// read the seam's messages.
var (
	// ErrNotExecutable: the command names no executable file in the
	// sandbox (a missing absolute path, or nothing on PATH).
	ErrNotExecutable = errors.New("not an executable in the sandbox")
	// ErrRelativeCommand: a command with a separator but no leading "/"
	// has no defined base directory.
	ErrRelativeCommand = errors.New("a relative command path has no defined base")
	// ErrNoFile: on stock envd's shell lookup the name is a builtin or a
	// function, not a file (env would still find a file of that name).
	ErrNoFile = errors.New("the name resolves to no file")
	// ErrSandboxGone: the sandbox no longer exists (by SandboxGone's rule),
	// so nothing can run in it any more.
	ErrSandboxGone = errors.New("the sandbox is gone")
)
