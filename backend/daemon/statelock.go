package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// LockFile, in a state directory, is held (flock) by the one daemon that
// serves it and names its pid. Two daemons on one state directory would
// each adopt the other's shims, and a shim serves one daemon at a time.
const LockFile = "daemon.lock"

// stateLock is a held LockFile. The kernel drops the lock when its holder
// dies, so a crashed daemon never keeps the next one out; the file is
// close-on-exec, so no shim inherits it.
type stateLock struct{ f *os.File }

// ErrStateDirInUse is the error of a daemon started on a state directory
// another one serves.
var ErrStateDirInUse = errors.New("state directory in use")

// lockStateDir takes state's lock for this process, or says which daemon
// holds it.
func lockStateDir(state string) (*stateLock, error) {
	path := filepath.Join(state, LockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the state directory's lock: %w", err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		defer f.Close()
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		holder := "another sandtop daemon"
		b := make([]byte, 32)
		if n, _ := f.ReadAt(b, 0); n > 0 {
			if pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n]))); err == nil && pid > 0 {
				holder = fmt.Sprintf("the sandtop daemon with pid %d", pid)
			}
		}
		return nil, fmt.Errorf("%w: %s is served by %s (one daemon per state directory: stop it, or give this one its own --state-dir)", ErrStateDirInUse, state, holder)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &stateLock{f: f}, nil
}

// release drops the lock (the daemon has stopped).
func (l *stateLock) release() {
	_ = l.f.Truncate(0)
	_ = unix.Flock(int(l.f.Fd()), unix.LOCK_UN)
	_ = l.f.Close()
}
