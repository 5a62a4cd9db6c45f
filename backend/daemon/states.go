package daemon

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon/runtimeroot"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/wrapper"
)

// stateFileCaps are the published files ReadStates returns, with how much
// of each: an argv may be long, the rest are a line or two.
var stateFileCaps = map[string]int{
	wrapper.PidFile:      1 << 10,
	wrapper.ExitCodeFile: 1 << 10,
	wrapper.SignalFile:   1 << 10,
	wrapper.TagFile:      1 << 10,
	wrapper.ProblemFile:  1 << 10,
	wrapper.ArgvFile:     6 << 10,
}

// ReadStates reads every state directory under <root>/processes in one
// answer, so a listing costs one round trip instead of several per group.
// Each directory and file is opened relative to its parent without
// following links: a program may plant anything in its own state directory.
func (s supervisorService) ReadStates(ctx context.Context, _ *connect.Request[sandtopv1.ReadStatesRequest]) (*connect.Response[sandtopv1.ReadStatesResponse], error) {
	res := &sandtopv1.ReadStatesResponse{}
	procs, err := runtimeroot.OpenBeneath(s.d.root, wrapper.ProcessesDir)
	if errors.Is(err, unix.ENOENT) || errors.Is(err, os.ErrNotExist) {
		return connect.NewResponse(res), nil
	}
	if err != nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("open the state directories: %w", err))
	}
	defer procs.Close()
	names, err := procs.Readdirnames(-1)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("list the state directories: %w", err))
	}
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		if ctx.Err() != nil {
			return nil, connect.NewError(connect.CodeCanceled, ctx.Err())
		}
		seen[name] = true
		if dir, ok := s.d.settled.read(int(procs.Fd()), name); ok {
			if _, problem := dir.GetFiles()[wrapper.ProblemFile]; !exited(dir) && !problem {
				dir.SupervisorRunning = s.d.shimOwns(dir) // a fresh answer, not a cached one
				if !dir.SupervisorRunning && (hasEntry(dir, wrapper.SupervisorFile) || s.d.shimlessOwns(dir)) {
					// A shim ran this group and will not publish its end (it
					// was killed): its command is known only from here,
					// live or not.
					addArgv(int(procs.Fd()), dir)
				}
			}
			res.Dirs = append(res.Dirs, dir)
		}
	}
	s.d.settled.forgetExcept(seen)
	return connect.NewResponse(res), nil
}

// settledStates keeps the answers for state directories whose group has
// published its exit: they change only by an entry being added or removed,
// which changes the directory's mtime. A listing of 1,000 finished groups
// then costs one stat each instead of about twenty system calls.
type settledStates struct {
	mu sync.Mutex
	m  map[string]settledState
}

type settledState struct {
	mtime unix.Timespec
	ino   uint64
	dir   *sandtopv1.StateDir
}

func (c *settledStates) read(parent int, name string) (*sandtopv1.StateDir, bool) {
	var st unix.Stat_t
	if unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return nil, false
	}
	c.mu.Lock()
	cached, ok := c.m[name]
	c.mu.Unlock()
	if ok && cached.mtime == st.Mtim && cached.ino == st.Ino {
		return cached.dir, true
	}
	dir, ok := readStateDir(parent, name)
	if ok && exited(dir) {
		c.mu.Lock()
		if c.m == nil {
			c.m = map[string]settledState{}
		}
		c.m[name] = settledState{mtime: st.Mtim, ino: st.Ino, dir: dir}
		c.mu.Unlock()
	}
	return dir, ok
}

func (c *settledStates) forgetExcept(seen map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name := range c.m {
		if !seen[name] {
			delete(c.m, name)
		}
	}
}

// readStateDir reads one state directory; anything but a real directory
// (or one removed meanwhile) is skipped.
func readStateDir(parent int, name string) (*sandtopv1.StateDir, bool) {
	fd, err := unix.Openat(parent, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	d := os.NewFile(uintptr(fd), name)
	defer d.Close()
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return nil, false
	}
	out := &sandtopv1.StateDir{Id: name, MtimeUnixMs: st.Mtim.Sec*1000 + st.Mtim.Nsec/1e6, Files: map[string][]byte{}}
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, false
	}
	// Only what a listing judges by is read: a spill's size, and the small
	// files; the argv only once the group has ended (a live leader shows
	// it in the process table): its exit published, or no process left in
	// it, which comes first when a shim has reaped the program and is
	// about to publish. A listing reads every directory, every
	// time, so each system call here counts a thousandfold.
	var argvPresent bool
	for _, e := range entries {
		de := &sandtopv1.DirEntry{Name: e.Name(), Dir: e.IsDir(), Mode: uint32(e.Type())}
		out.Entries = append(out.Entries, de)
		switch name := e.Name(); {
		case name == wrapper.StdoutSpillFile || name == wrapper.StderrSpillFile:
			var est unix.Stat_t
			if unix.Fstatat(fd, name, &est, unix.AT_SYMLINK_NOFOLLOW) == nil {
				de.Size, de.MtimeUnixMs = uint64(max(est.Size, 0)), est.Mtim.Sec*1000+est.Mtim.Nsec/1e6
			}
		case name == wrapper.ArgvFile:
			argvPresent = e.Type().IsRegular()
		case name == wrapper.SupervisorFile:
			// Its presence is what counts.
		case e.Type().IsRegular() && stateFileCaps[name] > 0:
			if b, ok := readSmallFile(fd, name, stateFileCaps[name]); ok {
				out.Files[name] = b
			}
		}
	}
	if argvPresent && (exited(out) || emptied(out.Files[wrapper.PidFile])) {
		if b, ok := readSmallFile(fd, wrapper.ArgvFile, stateFileCaps[wrapper.ArgvFile]); ok {
			out.Files[wrapper.ArgvFile] = b
		}
	}
	return out, true
}

// readSmallFile reads up to limit bytes of a regular file under dir, in
// one read.
func readSmallFile(dir int, name string, limit int) ([]byte, bool) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, false
	}
	buf := make([]byte, min(int64(limit), max(st.Size, 0)+1))
	n, err := unix.Read(fd, buf)
	if err != nil || n < 0 {
		return nil, false
	}
	return buf[:n], true
}

// exited says whether a state directory holds a published exit status.
func exited(dir *sandtopv1.StateDir) bool {
	return len(bytes.TrimSpace(dir.GetFiles()[wrapper.ExitCodeFile])) > 0
}

// shimOwns says whether a connected shim supervises the group of dir: one
// that has not published an exit status yet is about to.
func (d *Daemon) shimOwns(dir *sandtopv1.StateDir) bool {
	pgid, err := wrapper.ParsePgid(string(dir.GetFiles()[wrapper.PidFile]))
	if err != nil {
		return false
	}
	l := d.reg.shimByPgid(pgid)
	return l != nil && filepath.Base(l.dir) == dir.GetId()
}

// emptied says whether the group a pid file names has no process left.
func emptied(pidFile []byte) bool {
	pgid, err := wrapper.ParsePgid(string(pidFile))
	return err == nil && noProcessIn(pgid)
}

// shimlessOwns says whether dir is a shimless group's.
func (d *Daemon) shimlessOwns(dir *sandtopv1.StateDir) bool {
	pgid, err := wrapper.ParsePgid(string(dir.GetFiles()[wrapper.PidFile]))
	if err != nil {
		return false
	}
	l := d.reg.shimlessByPgid(pgid)
	return l != nil && filepath.Base(l.dir) == dir.GetId()
}

func hasEntry(dir *sandtopv1.StateDir, name string) bool {
	for _, e := range dir.GetEntries() {
		if e.GetName() == name {
			return true
		}
	}
	return false
}

// addArgv adds the argv file to dir's files when the directory has one and
// it was not read yet.
func addArgv(parent int, dir *sandtopv1.StateDir) {
	if _, ok := dir.Files[wrapper.ArgvFile]; ok {
		return
	}
	for _, e := range dir.GetEntries() {
		if e.GetName() != wrapper.ArgvFile {
			continue
		}
		fd, err := unix.Openat(parent, dir.GetId(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return
		}
		if b, ok := readSmallFile(fd, wrapper.ArgvFile, stateFileCaps[wrapper.ArgvFile]); ok {
			dir.Files[wrapper.ArgvFile] = b
		}
		_ = unix.Close(fd)
		return
	}
}
