package cli

import (
	"errors"
	"strings"
)

// Exit codes. They are documented in the README; keep the two in step.
const (
	exitOK    = 0 // success
	exitError = 1 // the operation failed (connection, daemon, bad pid, ...)
	exitUsage = 2 // the command line was wrong: unknown command or flag, bad argument
	// run --wait exits with the child's own code, or 128+N when signal N
	// ended it, like a shell does.
	exitInterrupted = 130 // sandtop itself was interrupted (Ctrl-C) while waiting
)

// usageError marks a mistake on the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(err error) error {
	if err == nil {
		return nil
	}
	return usageError{err}
}

// exitCodeError carries an exit code chosen by the command (run --wait
// passes the child's on). Its message may be empty.
type exitCodeError struct {
	code int
	err  error
}

func (e exitCodeError) Error() string {
	if e.err == nil {
		return ""
	}
	return e.err.Error()
}
func (e exitCodeError) Unwrap() error { return e.err }

func exitCodeOf(err error) int {
	var ce exitCodeError
	if errors.As(err, &ce) {
		return ce.code
	}
	var ue usageError
	if errors.As(err, &ue) {
		return exitUsage
	}
	return exitError
}

func isSilent(err error) bool {
	var ce exitCodeError
	return errors.As(err, &ce) && ce.err == nil
}

// oneLine folds a multi-line message so every failure is one stderr line;
// the daemon log tail, if any, stays readable after " | ".
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "\n") {
		return s
	}
	parts := strings.Split(s, "\n")
	for i := range parts {
		parts[i] = strings.TrimSpace(parts[i])
	}
	return strings.Join(parts, " | ")
}
