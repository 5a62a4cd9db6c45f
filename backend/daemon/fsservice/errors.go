package fsservice

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sandtop/safetext"
	"syscall"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// fsError turns an error from a file operation into a Connect error whose
// code says what went wrong, with what as the message's start. Errors that
// already carry a code pass through.
func fsError(err error, format string, args ...any) error {
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		return err
	}
	return connect.NewError(codeOf(err), fmt.Errorf(format+": %w", append(clipArgs(args), bare(err))...))
}

// clip shortens a client's string for a message.
func clip(s string) string { return safetext.Quoted(s) }

func clipArgs(args []any) []any {
	out := make([]any, len(args))
	for i, a := range args {
		if s, ok := a.(string); ok {
			a = clip(s)
		}
		out[i] = a
	}
	return out
}

// bare is err without the path it may carry: the message quotes the path
// once, clipped, and the cause need not repeat it.
func bare(err error) error {
	var pe *fs.PathError
	var le *os.LinkError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	case errors.As(err, &errno):
		return errno
	case len(err.Error()) > 2*safetext.MaxQuoted:
		return errors.New(clip(err.Error()))
	}
	return err
}

func codeOf(err error) connect.Code {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return connect.CodeNotFound
	case errors.Is(err, fs.ErrExist):
		return connect.CodeAlreadyExists
	case errors.Is(err, fs.ErrPermission), errors.Is(err, unix.EROFS):
		return connect.CodePermissionDenied
	case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.EISDIR), errors.Is(err, unix.EINVAL),
		errors.Is(err, unix.ENAMETOOLONG), errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EXDEV):
		return connect.CodeInvalidArgument
	case errors.Is(err, unix.ELOOP):
		return connect.CodeFailedPrecondition
	case errors.Is(err, unix.ENOSPC), errors.Is(err, unix.EDQUOT):
		return connect.CodeResourceExhausted
	}
	return connect.CodeInternal
}

func errorf(code connect.Code, format string, args ...any) error {
	return connect.NewError(code, fmt.Errorf(format, clipArgs(args)...))
}

// httpStatus is the /files status for an error, as envd answers: 400 bad
// path, 401 unknown user, 404 missing, 507 disk full; 403 is ours, for what
// the user may not touch.
func httpStatus(err error) int {
	switch connect.CodeOf(err) {
	case connect.CodeNotFound:
		return http.StatusNotFound
	case connect.CodePermissionDenied:
		return http.StatusForbidden
	case connect.CodeInvalidArgument, connect.CodeAlreadyExists, connect.CodeFailedPrecondition:
		return http.StatusBadRequest
	case connect.CodeUnauthenticated:
		return http.StatusUnauthorized
	case connect.CodeResourceExhausted:
		return http.StatusInsufficientStorage
	}
	return http.StatusInternalServerError
}
