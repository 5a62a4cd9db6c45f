package control

import (
	"errors"
	"fmt"
)

// ErrNotFound: no such process or group in the sandbox.
var ErrNotFound = errors.New("not found in the sandbox")

// kindError is an error with its own message that also matches kind.
type kindError struct {
	kind error
	msg  string
}

func (e kindError) Error() string        { return e.msg }
func (e kindError) Is(target error) bool { return target == e.kind }

// ErrorOf formats a message that errors.Is matches against kind.
func ErrorOf(kind error, format string, args ...any) error {
	return kindError{kind: kind, msg: fmt.Sprintf(format, args...)}
}
