package local

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockPoll is how often a starter retries a held start lock.
const lockPoll = 20 * time.Millisecond

// startLock is an exclusive flock on the runtime directory's lock file. The
// kernel drops it if the holder dies, so a crashed starter never wedges
// the next one.
type startLock struct{ f *os.File }

func acquireStartLock(ctx context.Context, path string) (*startLock, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open start lock: %w", err)
	}
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return &startLock{f: f}, nil
		}
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("waiting for another sandtop to finish starting the local sandbox: %w", ctx.Err())
		case <-time.After(lockPoll):
		}
	}
}

func (l *startLock) release() {
	_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	l.f.Close()
}
