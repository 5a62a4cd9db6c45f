package shim

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// fastPipe is the pipe of a fast stream once it has left Go's poller.
//
// While a pipe is registered with epoll, the kernel wakes the poller on
// every write the program makes, whether or not anyone waits for it: at
// 4 KiB per write, that was tens of thousands of wake-ups (and as many
// context switches for the program) per 256 MiB. A fast stream is read
// in gathered chunks anyway, so its pipe is dropped from the poller and
// waited on with poll(2) only when it is empty.
type fastPipe struct {
	fd   int
	stop int // an eventfd: readable once the shim gives up on the pipe
}

// detach takes r's pipe out of Go's poller: it keeps a duplicate of the
// descriptor and closes r, which deregisters it. stop ends any wait.
func detach(r *os.File, stop int) (*fastPipe, error) {
	sc, err := r.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	cerr := sc.Control(func(f uintptr) { fd, err = unix.FcntlInt(f, unix.F_DUPFD_CLOEXEC, 0) })
	if cerr != nil {
		return nil, cerr
	}
	if err != nil {
		return nil, err
	}
	_ = r.Close()
	return &fastPipe{fd: fd, stop: stop}, nil
}

func (p *fastPipe) close() { _ = unix.Close(p.fd) }

// inq tells how many bytes the pipe holds.
func (p *fastPipe) inq() (int, error) { return unix.IoctlGetInt(p.fd, unix.TIOCINQ) }

// pending waits until the pipe holds output or is at its end, gathers a
// little more if it holds only a few KiB (see gatherBytes), and returns
// how many bytes it holds; io.EOF at the end, or once stopped.
func (p *fastPipe) pending() (int, error) {
	for {
		avail, err := p.inq()
		if err != nil {
			return 0, err
		}
		if avail > 0 {
			return gather(avail, p.inq), nil
		}
		fds := []unix.PollFd{{Fd: int32(p.fd), Events: unix.POLLIN}, {Fd: int32(p.stop), Events: unix.POLLIN}}
		if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
			return 0, err
		}
		if fds[1].Revents != 0 {
			return 0, io.EOF
		}
		if fds[0].Revents&unix.POLLIN == 0 && fds[0].Revents&(unix.POLLHUP|unix.POLLERR) != 0 {
			return 0, io.EOF // every writer has gone and nothing is left
		}
	}
}

// read reads what pending reported; it does not block.
func (p *fastPipe) read(buf []byte) (int, error) {
	for {
		n, err := unix.Read(p.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if n < 0 {
			n = 0
		}
		return n, err
	}
}
