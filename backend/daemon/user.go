package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"
)

// userInfo is the Unix user a child runs as.
type userInfo struct {
	name string
	home string
	cred *syscall.Credential // nil: run as the daemon's own user
}

func (u userInfo) apply(attr *syscall.SysProcAttr) {
	if u.cred != nil {
		attr.Credential = u.cred
	}
}

// selfInfo describes the daemon's own OS process.
type selfInfo struct {
	pid      int
	pgid     int
	uid      uint32
	hostname string
	user     userInfo
	root     bool
}

func currentSelf() (selfInfo, error) {
	u, err := user.Current()
	if err != nil {
		return selfInfo{}, fmt.Errorf("daemon: look up current user: %w", err)
	}
	pgid, err := unix.Getpgid(0)
	if err != nil {
		return selfInfo{}, fmt.Errorf("daemon: getpgid: %w", err)
	}
	host, _ := os.Hostname()
	home := u.HomeDir
	if home == "" {
		home = "/"
	}
	return selfInfo{
		pid:      os.Getpid(),
		pgid:     pgid,
		uid:      uint32(os.Geteuid()),
		hostname: host,
		user:     userInfo{name: u.Username, home: home},
		root:     os.Geteuid() == 0,
	}, nil
}

// resolveUser picks the user a request acts as: the one it names, else the
// default user /init set, else the daemon's own.
func (d *Daemon) resolveUser(name string) (userInfo, error) {
	if name == "" {
		name, _ = d.defaults.get()
	}
	return d.lookupUser(name)
}

// lookupUser finds a user by name ("" or the daemon's own: the daemon's
// user). A root daemon switches to any existing user; a non-root daemon
// cannot, and refuses other names.
func (d *Daemon) lookupUser(name string) (userInfo, error) {
	if name == "" || name == d.self.user.name {
		return d.self.user, nil
	}
	if !d.self.root {
		return userInfo{}, connect.NewError(connect.CodePermissionDenied,
			fmt.Errorf("daemon runs as %q and cannot start processes as user %q", d.self.user.name, clip(name)))
	}
	u, err := user.Lookup(name)
	if err != nil {
		return userInfo{}, connect.NewError(connect.CodeUnauthenticated, fmt.Errorf("invalid username: '%s'", clip(name))) // envd's answer
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				cred.Groups = append(cred.Groups, uint32(n))
			}
		}
	}
	home := u.HomeDir
	if home == "" {
		home = "/"
	}
	return userInfo{name: u.Username, home: home, cred: cred}, nil
}

// resolveCwd applies envd's rules: empty → the default workdir /init set,
// else home; "~" and relative paths are relative to home; the result must be
// an existing directory.
func resolveCwd(cwd *string, u userInfo, workdir string) (string, error) {
	home := u.home
	if (cwd == nil || *cwd == "") && workdir != "" {
		cwd = &workdir
	}
	if cwd == nil || *cwd == "" {
		// Say it is the home that is missing, not the program (which is
		// what exec would blame).
		if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
			return "", connect.NewError(connect.CodeFailedPrecondition,
				fmt.Errorf("home directory %q of user %q does not exist or is not a directory; pass a cwd", home, clip(u.name)))
		}
		return home, nil
	}
	dir := *cwd
	switch {
	case dir == "~":
		dir = home
	case strings.HasPrefix(dir, "~/"):
		dir = filepath.Join(home, dir[2:])
	case !filepath.IsAbs(dir):
		dir = filepath.Join(home, dir)
	}
	fi, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("cwd '%s' does not exist", clip(dir)))
	}
	if err != nil {
		return "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("cwd %q: %w", clip(dir), bare(err)))
	}
	if !fi.IsDir() {
		return "", connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("cwd %q is not a directory", clip(dir)))
	}
	return dir, nil
}

// lookPath resolves name against the child's PATH (not the daemon's), the
// way a shell's exec would.
func lookPath(name, pathEnv, cwd string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if err := executable(p); err != nil {
			return "", fmt.Errorf("executable %q: %w", clip(name), bare(err))
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			dir = "."
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(cwd, dir)
		}
		p := filepath.Join(dir, name)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", notInPathError{name: clip(name), path: clip(pathEnv)}
}

// notInPathError: no directory of PATH holds the program (the shell's 127).
type notInPathError struct{ name, path string }

func (e notInPathError) Error() string {
	return fmt.Sprintf("executable %q not found in PATH %q", e.name, e.path)
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errors.New("is a directory")
	}
	if fi.Mode()&0o111 == 0 {
		return errors.New("is not executable")
	}
	return nil
}
