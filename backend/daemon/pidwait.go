package daemon

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
	"unsafe"

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
		// Wait for the exit without reaping, then let the ended shim's
		// /proc entries settle before reaping it (see shimReapDelay).
		_ = rc.Read(func(fd uintptr) bool { return waitPidfd(fd, unix.WNOWAIT) })
		time.Sleep(shimReapDelay)
		_ = rc.Read(func(fd uintptr) bool { return waitPidfd(fd, 0) })
	}, nil
}

// waitPidfd is one non-blocking waitid on a pidfd, for an exit (reaping it
// unless flags has WNOWAIT); false means "not yet, poll again". It is done
// once the child has exited (Linux then says SIGCHLD in si_signo) or when
// there is nothing to wait for (ECHILD). WNOHANG with the child running
// gives neither (si_signo 0), so the poller waits for the pidfd to become
// readable.
func waitPidfd(fd uintptr, flags int) bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG|flags, nil)
	if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
		return false
	}
	return err != nil || info.Signo == int32(unix.SIGCHLD)
}

// shimReapDelay is how long an ended shim stays a zombie before it is
// reaped. Reaping makes the kernel drop the shim's /proc entries
// (release_task, then d_invalidate of /proc/PID); done the moment the shim
// ended, while its last threads were still being released and the
// teardown's last looks at its /proc directory were in flight, that drop
// spun in d_walk and took most of the daemon's CPU during 300 teardowns
// (perf: 16 to 69% of its samples, milliseconds per shim). A few
// milliseconds later it costs microseconds. A zombie keeps its pid, so
// the pid cannot be recycled meanwhile: a kill of a shim not yet reaped
// still reaches only that zombie. Shims are never listed as work.
const shimReapDelay = 20 * time.Millisecond

// waitWithoutThread is os/exec's Wait for a plain Start's child without
// the thread: Wait blocks one OS thread in waitid per running child, and
// the Go runtime keeps every thread it ever made, so a thousand processes
// that an SDK starts and that all end leave a thousand idle threads behind.
// It opens a pidfd for pid, which must be an unreaped child nothing else
// waits for. onExit(fn) runs fn in a new goroutine once the child has
// exited: until then the pidfd waits in the quiet set, with no goroutine
// (see quietSet). wait, called from fn, reaps the child and gives its
// status (blocking in the runtime's poller should it not have exited
// yet).
func waitWithoutThread(pid int) (wait func() (syscall.WaitStatus, error), onExit func(fn func()), err error) {
	fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK)
	if err != nil {
		return nil, nil, fmt.Errorf("pidfd of %d: %w", pid, err)
	}
	wait = func() (syscall.WaitStatus, error) {
		// Into the runtime's poller only now, for a wait that is over
		// (or nearly).
		f := os.NewFile(uintptr(fd), "pidfd")
		defer f.Close()
		rc, err := f.SyscallConn()
		if err != nil {
			return 0, fmt.Errorf("wait for %d: %w", pid, err)
		}
		var info unix.Siginfo
		var werr error
		err = rc.Read(func(fd uintptr) bool {
			info = unix.Siginfo{}
			werr = unix.Waitid(unix.P_PIDFD, int(fd), &info, unix.WEXITED|unix.WNOHANG, nil)
			if errors.Is(werr, unix.EINTR) || errors.Is(werr, unix.EAGAIN) {
				return false
			}
			return werr != nil || info.Signo == int32(unix.SIGCHLD)
		})
		if err == nil {
			err = werr
		}
		if err != nil {
			return 0, fmt.Errorf("wait for %d: %w", pid, err)
		}
		return waitStatusOf(&info), nil
	}
	onExit = func(fn func()) {
		if quiet.addOnce(fd, fn) != nil {
			go fn() // wait waits in the poller then
		}
	}
	return wait, onExit, nil
}

// The si_code values of a child's exit (linux/signal.h).
const (
	cldExited = 1
	cldKilled = 2
	cldDumped = 3
)

// waitStatusOf encodes a waitid result the way wait4 reports it, so exit
// facts read the same whichever call reaped the child.
func waitStatusOf(info *unix.Siginfo) syscall.WaitStatus {
	// si_status follows si_pid and si_uid in the union, which starts after
	// three ints, aligned for a pointer.
	const ptr = unsafe.Sizeof(uintptr(0))
	const union = (12 + ptr - 1) &^ (ptr - 1)
	status := *(*int32)(unsafe.Add(unsafe.Pointer(info), union+8))
	switch info.Code {
	case cldExited:
		return syscall.WaitStatus(uint32(status&0xff) << 8)
	case cldKilled:
		return syscall.WaitStatus(uint32(status & 0x7f))
	case cldDumped:
		return syscall.WaitStatus(uint32(status&0x7f) | 0x80)
	}
	return syscall.WaitStatus(uint32(status&0xff) << 8)
}
