package seam

import (
	"errors"
	"fmt"
)

// Errors callers can test for with errors.Is, so that no front-end has to
// read the seam's messages.
var (
	// ErrNotExecutable: the command names no executable file in the
	// sandbox (a missing absolute path, or nothing on PATH).
	ErrNotExecutable = errors.New("not an executable in the sandbox")
	// ErrNotFound: no such process or group in the sandbox.
	ErrNotFound = errors.New("not found in the sandbox")
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

// kindError is an error with its own message that also matches kind.
type kindError struct {
	kind error
	msg  string
}

func (e kindError) Error() string        { return e.msg }
func (e kindError) Is(target error) bool { return target == e.kind }

// errorOf formats a message that errors.Is matches against kind.
func errorOf(kind error, format string, args ...any) error {
	return kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
