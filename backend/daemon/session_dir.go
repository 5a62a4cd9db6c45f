package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"syscall"

	"connectrpc.com/connect"
)

// SessionDirHeader asks Start for what the seam's wrapper otherwise does
// with three execs: the daemon creates the named state directory (new, 0700,
// directly under <runtime root>/processes, owned by the user the child runs
// as), starts the child as the leader of a new session, and writes its pid
// to the directory's pid file before the start event. The group is thereby
// published when the start event arrives. Stock envd ignores the header;
// clients send it only when Hello lists CapSessionDir.
const SessionDirHeader = "Sandtop-Session-Dir"

// CapSessionDir is the Hello capability for SessionDirHeader.
const CapSessionDir = "session-dir"

// sessionDir validates the header's path and creates the directory.
func (d *Daemon) sessionDir(path string, u userInfo) (string, error) {
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
		return "", connect.NewError(connect.CodeInternal, err)
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
		return "", connect.NewError(connect.CodeInternal, err)
	}
	if u.cred != nil {
		if err := os.Chown(dir, int(u.cred.Uid), int(u.cred.Gid)); err != nil {
			_ = os.Remove(dir)
			return "", connect.NewError(connect.CodeInternal, err)
		}
	}
	return dir, nil
}

// sessionState is the state directory of a session-dir start.
type sessionState struct {
	dir  string
	user userInfo
}

// publishPid writes the new session leader's pid, as the wrapper's inner
// half would.
func (s *sessionState) publishPid(pid uint32) error {
	return s.write("pid", strconv.FormatUint(uint64(pid), 10))
}

// publishDeath records a signal death the wrapper could not publish (it was
// killed with its group, SIGKILL included), as the wrapper's outer half does
// in its classic form: signal, and 128+signal as the exit code.
func (s *sessionState) publishDeath(st *os.ProcessState) {
	ws, ok := st.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return
	}
	if b, err := os.ReadFile(filepath.Join(s.dir, "exit-code")); err == nil && len(bytes.TrimSpace(b)) > 0 {
		return // the wrapper published first
	}
	if _, err := os.Stat(s.dir); err != nil {
		return // removed (a rolled-back spawn)
	}
	sig := int(ws.Signal())
	_ = s.write("signal", strconv.Itoa(sig))
	_ = s.write("exit-code", strconv.Itoa(128+sig))
}

func (s *sessionState) write(name, value string) error {
	f := filepath.Join(s.dir, name)
	if err := os.WriteFile(f, []byte(value+"\n"), 0o600); err != nil {
		return err
	}
	if s.user.cred != nil {
		return os.Chown(f, int(s.user.cred.Uid), int(s.user.cred.Gid))
	}
	return nil
}
