package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"connectrpc.com/connect"
)

// SessionDirHeader asks Start to run the command under a shim (see
// sandtop/backend/shim), the per-group supervisor: the daemon creates the
// named state directory (new, 0700, directly under <runtime root>/processes,
// owned by the daemon's user so the program cannot write it), the shim
// publishes the group there in the wrapper's layout and leads a new session
// in which the command leads its own process group. The start event carries
// the command's pid, which is the group's pgid and is already published.
// The request's envs are the command's whole environment (nothing of the
// daemon's is added, as with the wrapper's env -i). Stock envd ignores the
// header; clients send it only when Hello lists CapShim.
const SessionDirHeader = "Sandtop-Session-Dir"

// SpillHeader caps the spill files of a SessionDirHeader start:
// "<stdout bytes> <stderr bytes>", -1 for a stream that is not spilled.
// Absent: neither is.
const SpillHeader = "Sandtop-Spill"

// CapShim is the Hello capability for SessionDirHeader and SpillHeader.
const CapShim = "shim"

// sessionDir validates the header's path and creates the directory.
func (d *Daemon) sessionDir(path string) (string, error) {
	invalid := func(format string, args ...any) error {
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf(SessionDirHeader+": "+format, args...))
	}
	if !filepath.IsAbs(path) || filepath.Clean(path) != path {
		return "", invalid("%q is not a clean absolute path", path)
	}
	parent, name := filepath.Split(path)
	processes := filepath.Join(d.root, "processes")
	if cfg, err := filepath.Abs(d.cfg.RuntimeRoot); err == nil && filepath.Clean(parent) == filepath.Join(cfg, "processes") {
		parent = processes // the root as configured, before symlinks were resolved
	}
	if filepath.Clean(parent) != processes || name == "" || name == "." || name == ".." {
		return "", connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf(SessionDirHeader+": %q is not a directory directly under %s", path, processes))
	}
	if err := os.MkdirAll(processes, 0o700); err != nil {
		return "", connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("cannot create the state directory: %w", err))
	}
	// A symlink planted in place of processes/ must not lead the daemon's
	// mkdir and writes elsewhere.
	if st, err := os.Lstat(processes); err != nil || !st.IsDir() {
		return "", connect.NewError(connect.CodePermissionDenied, fmt.Errorf(SessionDirHeader+": %s is not a directory", processes))
	}
	dir := filepath.Join(processes, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return "", connect.NewError(connect.CodeAlreadyExists, fmt.Errorf(SessionDirHeader+": %s already exists", path))
		}
		return "", connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("cannot create the state directory: %w", err))
	}
	return dir, nil
}
