// Package rawsock reads and writes unix sockets with raw system calls.
//
// Go's read and write on a socket tell the scheduler they enter a system
// call. One that copies a large message (a stream's output comes in
// messages of up to 1 MiB) takes long enough that the runtime's monitor
// hands the goroutine's P to another thread meanwhile, and on a stream of
// large messages that costs more than the copy itself: threads woken to
// find no work, and a monitor that keeps waking every 20 µs to look. But a
// read or write on a socket of Go's, which is non-blocking, never waits: it
// fails with EAGAIN instead, and then the goroutine parks in the poller as
// usual. So it can run as a raw system call, a bounded copy like any other
// work the goroutine does on its P. Deadlines and Close work as on the
// socket itself (the waits go through its syscall.RawConn).
package rawsock

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Conn is a unix socket whose Read and Write are raw system calls.
type Conn struct {
	*net.UnixConn
	rc syscall.RawConn
}

// Wrap returns c as a Conn when it is a non-blocking unix socket (as
// every socket net makes is), else c itself: a raw call on a blocking one
// could hold its thread and P for as long as the peer waits.
func Wrap(c net.Conn) net.Conn {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return c
	}
	rc, err := uc.SyscallConn()
	if err != nil {
		return c
	}
	nonblocking := false
	if err := rc.Control(func(fd uintptr) {
		flags, err := unix.FcntlInt(fd, unix.F_GETFL, 0)
		nonblocking = err == nil && flags&unix.O_NONBLOCK != 0
	}); err != nil || !nonblocking {
		return c
	}
	return &Conn{UnixConn: uc, rc: rc}
}

func (c *Conn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	var n int
	var errno syscall.Errno
	err := c.rc.Read(func(fd uintptr) bool {
		for {
			r, _, e := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
			switch e {
			case unix.EINTR:
				continue
			case unix.EAGAIN:
				return false // park in the poller until it is readable
			}
			n, errno = int(r), e
			return true
		}
	})
	switch {
	case err != nil: // closed, or past the deadline
		return 0, c.opError("read", err)
	case errno != 0:
		return 0, c.opError("read", errno)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

func (c *Conn) Write(p []byte) (int, error) {
	done := 0
	var errno syscall.Errno
	err := c.rc.Write(func(fd uintptr) bool {
		for done < len(p) {
			rest := p[done:]
			r, _, e := unix.RawSyscall(unix.SYS_WRITE, fd, uintptr(unsafe.Pointer(unsafe.SliceData(rest))), uintptr(len(rest)))
			switch e {
			case 0:
				done += int(r)
			case unix.EINTR:
			case unix.EAGAIN:
				return false // park in the poller until it is writable
			default:
				errno = e
				return true
			}
		}
		return true
	})
	switch {
	case err != nil:
		return done, c.opError("write", err)
	case errno != 0:
		return done, c.opError("write", errno)
	}
	return done, nil
}

func (c *Conn) opError(op string, err error) error {
	if errno, ok := err.(syscall.Errno); ok {
		err = &net.OpError{Op: op, Net: "unix", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: os.NewSyscallError(op, errno)}
		return err
	}
	return &net.OpError{Op: op, Net: "unix", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: err}
}

// Listener wraps the unix sockets it accepts (see Wrap).
type Listener struct{ net.Listener }

func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return Wrap(c), nil
}
