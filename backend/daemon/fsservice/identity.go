package fsservice

import (
	"fmt"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Identity is the user a request acts as.
type Identity struct {
	Name string
	Home string
	// Cred is nil when the request acts as the daemon's own user; otherwise
	// the daemon is root and file operations take on these ids.
	Cred *syscall.Credential
	// Workdir is what an empty path means (the default workdir /init
	// set); "" → Home.
	Workdir string
}

// path resolves a request path for this identity (see resolvePath).
func (id Identity) path(p string) (string, error) {
	if p == "" && id.Workdir != "" {
		p = id.Workdir
	}
	return resolvePath(p, id.Home)
}

// do runs fn with the identity's file-access rights. For another user it
// runs fn on an OS thread of its own whose filesystem uid, gid and
// supplementary groups are that user's, so the kernel checks every path
// component and every symlink target exactly as it would for the user (and
// new files and directories are the user's). The goroutine exits without
// unlocking its thread, which makes the runtime discard the thread: no other
// goroutine ever runs with those credentials, and nothing depends on a
// restore. New threads are never cloned from a locked one (the runtime uses
// its template thread), so the credentials do not spread either.
func (id Identity) do(fn func() error) error {
	if id.Cred == nil {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := actAs(id.Cred); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// actAs switches the calling thread's file-access credentials. These
// x/sys/unix calls are per-thread (unlike package syscall's, which apply to
// the whole process).
func actAs(c *syscall.Credential) error {
	groups := make([]int, 0, len(c.Groups)+1)
	groups = append(groups, int(c.Gid))
	for _, g := range c.Groups {
		groups = append(groups, int(g))
	}
	if err := unix.Setgroups(groups); err != nil {
		return fmt.Errorf("act as uid %d: setgroups: %w", c.Uid, err)
	}
	// setfsuid/setfsgid report no failure; the value read back tells.
	unix.SetfsgidRetGid(int(c.Gid))
	if prev, _ := unix.SetfsgidRetGid(-1); prev != int(c.Gid) {
		return fmt.Errorf("act as uid %d: setfsgid(%d) did not take", c.Uid, c.Gid)
	}
	unix.SetfsuidRetUid(int(c.Uid))
	if prev, _ := unix.SetfsuidRetUid(-1); prev != int(c.Uid) {
		return fmt.Errorf("act as uid %d: setfsuid did not take", c.Uid)
	}
	return nil
}
