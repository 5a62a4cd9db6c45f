package daemon

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPTY opens a pseudo-terminal pair. The master is non-blocking and
// registered with Go's poller, so Close interrupts a pending Read and write
// deadlines work. (creack/pty's helpers call File.Fd, which switches a file
// to blocking mode for good; then a reader stuck on the master cannot be
// stopped. So this file does the few ioctls itself.)
func openPTY(cols, rows uint16) (master, tty *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows}); err != nil {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("set pty size %dx%d: %w", cols, rows, err)
	}
	master = os.NewFile(uintptr(fd), "/dev/ptmx")
	name := "/dev/pts/" + strconv.FormatUint(uint64(n), 10)
	tty, err = os.OpenFile(name, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	return master, tty, nil
}

// withFd runs fn on the file's descriptor without changing its mode.
func withFd(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

func setWinsize(f *os.File, cols, rows uint16) error {
	return withFd(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
}

func getWinsize(f *os.File) (cols, rows uint16, err error) {
	err = withFd(f, func(fd int) error {
		ws, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ)
		if err == nil {
			cols, rows = ws.Col, ws.Row
		}
		return err
	})
	return cols, rows, err
}

func foregroundOf(f *os.File) (pgid int, err error) {
	err = withFd(f, func(fd int) error {
		pgid, err = unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		return err
	})
	return pgid, err
}
