package daemon

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// reapWithoutThread reaps child pid once it exits, without holding an OS
// thread while it runs: os/exec's Wait blocks one thread in waitid per
// child, which for a daemon with a thousand groups is a thousand threads.
// A pidfd is pollable, so the runtime's poller waits for all of them. The
// pidfd is opened before the caller gives up os/exec's claim on the child
// (Process.Release), while nothing else may reap it.
func reapWithoutThread(pid int) (wait func(), err error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	f := os.NewFile(uintptr(fd), "pidfd")
	rc, err := f.SyscallConn()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	return func() {
		defer f.Close()
		_ = rc.Read(func(fd uintptr) bool {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
				return false
			}
			// Done once reaped (Linux then says SIGCHLD in si_signo) or
			// when there is nothing to reap (ECHILD). WNOHANG with the
			// child running gives neither (si_signo 0), so the poller
			// waits for the pidfd to become readable.
			return err != nil || info.Signo == int32(unix.SIGCHLD)
		})
	}, nil
}
