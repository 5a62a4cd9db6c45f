package control

import (
	"context"
	"errors"
	"strconv"
	"syscall"
	"time"

	"sandtop/groupstate"
)

// Plane is what the seam needs from a sandbox besides starting
// processes: the process table, signals to whole groups, and reads of the
// state the wrapper publishes. There are two implementations, picked by
// the seam's NewRuntime: the sandtop.v1.Supervisor extension when the daemon answers
// Hello, and otherwise control commands (ps, kill, cat, ls, rm) run through
// process.Process/Start, which is all stock E2B envd offers. Terminals use
// the same interface for session groups, the foreground group and signals.
//
// Every method is safe for concurrent use. A pgid <= 1 is always refused:
// kill(-1) would reach every process of the user.
type Plane interface {
	// Kind is "extension" or "compat".
	Kind() string
	// Processes is one snapshot of the process table.
	Processes(ctx context.Context) ([]ProcessEntry, error)
	// GroupAlive reports whether pgid has a member that is neither a zombie
	// nor dead. A zombie-only group counts as empty.
	GroupAlive(ctx context.Context, pgid int) (bool, error)
	// SessionGroups lists the distinct pgids with a live member in session
	// sid, sorted.
	SessionGroups(ctx context.Context, sid int) ([]int, error)
	// SignalGroup sends sig to every member of pgid. delivered is false when
	// the group had no member left (ESRCH), which is not an error.
	SignalGroup(ctx context.Context, pgid int, sig syscall.Signal) (delivered bool, err error)
	// ForegroundGroup is the foreground process group (tpgid) of pid's
	// controlling terminal; ok is false when pid is gone or has none.
	// inputWaiting is only ever true when the daemon proved it.
	ForegroundGroup(ctx context.Context, pid int) (pgid int, inputWaiting, ok bool, err error)
	// ReadFile reads a small file (published state) whole. A missing file is
	// an error matching ErrFileNotFound.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// ReadRange reads up to length bytes (at most MaxReadRange) of a file
	// from offset, for files too big to hold whole (spills). size is the
	// file's size when it was read; fewer bytes than asked means its end.
	// A missing file is an error matching ErrFileNotFound.
	ReadRange(ctx context.Context, path string, offset int64, length int) (data []byte, size int64, err error)
	// ListDir lists the entries of a directory (ErrFileNotFound if absent).
	ListDir(ctx context.Context, path string) ([]DirEntry, error)
	// Remove deletes files or directory trees; missing paths are fine.
	Remove(ctx context.Context, paths ...string) error
	// AgentStateDirs lists the state directories that the leaders of live
	// groups started by an agent's provider name in their argv
	// (wrapper.AgentStateDir), sorted and without repeats.
	AgentStateDirs(ctx context.Context) ([]string, error)
}

// MaxReadRange bounds one ReadRange: sandtop's daemon answers at most this
// much per call.
const MaxReadRange = 1 << 20

// ErrFileNotFound is matched (errors.Is) by Plane read errors for a
// path that does not exist.
var ErrFileNotFound = errors.New("file not found in the sandbox")

// ProcessEntry is one row of the sandbox's process table.
type ProcessEntry struct {
	Pid, Pgid, Sid int
	// State is the one-letter state of /proc/<pid>/stat (R, S, D, T, Z, X…).
	State string
	// EscapeeOf is the group an escapee left (setsid, a double fork) while
	// its shim still supervises it, on sandtop's daemon; 0 otherwise. It
	// keeps that group live.
	EscapeeOf int
}

// Live reports whether the entry is neither a zombie nor dead.
func (p ProcessEntry) Live() bool { return groupstate.ProcLive(p.State) }

// DirEntry is one entry of a sandbox directory.
type DirEntry struct {
	Name string
	Dir  bool
	Size int64
	// ModTime is zero where the control plane cannot tell (stock envd).
	ModTime time.Time
}

// CheckGroupID refuses pgids that would reach far more than one group.
func CheckGroupID(pgid int) error {
	if pgid <= 1 {
		return &unsafeGroupError{pgid}
	}
	return nil
}

type unsafeGroupError struct{ pgid int }

func (e *unsafeGroupError) Error() string {
	return "refusing to signal unsafe process group " + strconv.Itoa(e.pgid)
}
