package local

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
)

// Environment variables that move the local sandbox's directories. Tests
// set them so each test gets its own daemon.
const (
	EnvRuntimeDir = "SANDTOP_RUNTIME_DIR"
	EnvStateDir   = "SANDTOP_STATE_DIR"
)

// maxSocketPath is the usable length of sockaddr_un.sun_path on Linux.
const maxSocketPath = 107

// Paths are where the local sandbox keeps its socket, lock, state and log.
type Paths struct {
	// RuntimeDir is a private (0700) directory holding the socket and the
	// start lock. It is volatile: $XDG_RUNTIME_DIR/sandtop, or
	// /tmp/sandtop-$UID.
	RuntimeDir string
	// StateDir holds the daemon's runtime root and its log file. It
	// survives reboots: $XDG_STATE_HOME/sandtop, or ~/.local/state/sandtop.
	StateDir string
}

// Socket is the daemon's unix socket.
func (p Paths) Socket() string { return filepath.Join(p.RuntimeDir, "daemon.sock") }

// LockFile serialises daemon starts.
func (p Paths) LockFile() string { return filepath.Join(p.RuntimeDir, "daemon.lock") }

// LogFile receives the detached daemon's stdout and stderr.
func (p Paths) LogFile() string { return filepath.Join(p.StateDir, "daemon.log") }

// Target is the socket in the form the envd client dials ("unix:/path").
func (p Paths) Target() string { return "unix:" + p.Socket() }

// DefaultPaths resolves the directories from the process environment.
func DefaultPaths() (Paths, error) { return ResolvePaths(os.Getenv) }

// ResolvePaths resolves the directories from getenv: the SANDTOP_* overrides
// first, then the XDG base directories, then the documented fallbacks.
func ResolvePaths(getenv func(string) string) (Paths, error) {
	var p Paths
	switch {
	case getenv(EnvRuntimeDir) != "":
		p.RuntimeDir = getenv(EnvRuntimeDir)
	case getenv("XDG_RUNTIME_DIR") != "":
		p.RuntimeDir = filepath.Join(getenv("XDG_RUNTIME_DIR"), "sandtop")
	default:
		p.RuntimeDir = filepath.Join(os.TempDir(), "sandtop-"+strconv.Itoa(os.Getuid()))
	}
	switch {
	case getenv(EnvStateDir) != "":
		p.StateDir = getenv(EnvStateDir)
	case getenv("XDG_STATE_HOME") != "":
		p.StateDir = filepath.Join(getenv("XDG_STATE_HOME"), "sandtop")
	default:
		home := getenv("HOME")
		if home == "" {
			return Paths{}, errors.New("cannot place the local sandbox state: neither $SANDTOP_STATE_DIR, $XDG_STATE_HOME nor $HOME is set")
		}
		p.StateDir = filepath.Join(home, ".local", "state", "sandtop")
	}
	for _, d := range []*string{&p.RuntimeDir, &p.StateDir} {
		abs, err := filepath.Abs(*d)
		if err != nil {
			return Paths{}, fmt.Errorf("resolve %q: %w", *d, err)
		}
		*d = abs
	}
	if n := len(p.Socket()); n > maxSocketPath {
		return Paths{}, fmt.Errorf("socket path %s is %d bytes, longer than the %d a unix socket allows; set %s to a shorter directory", p.Socket(), n, maxSocketPath, EnvRuntimeDir)
	}
	return p, nil
}

// Prepare creates both directories and makes sure the runtime directory is
// private: a directory (not a symlink) owned by this user with no group or
// other access, since anyone who can reach the socket can run commands.
func (p Paths) Prepare() error {
	if err := privateDir(p.RuntimeDir); err != nil {
		return err
	}
	if err := os.MkdirAll(p.StateDir, 0o700); err != nil {
		return fmt.Errorf("create state directory: %w", err)
	}
	return nil
}

func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create runtime directory: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("runtime directory: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("runtime directory %s is not a directory (a symlink?); remove it", dir)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("runtime directory %s belongs to uid %d, not to you (uid %d); remove it or set %s", dir, st.Uid, os.Getuid(), EnvRuntimeDir)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("make runtime directory private: %w", err)
		}
	}
	return nil
}
