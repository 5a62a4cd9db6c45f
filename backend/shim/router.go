package shim

import (
	"encoding/binary"
	"io"
	"net"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

// router sends the program's output and its end to the daemon that is
// connected, or keeps the output in the ring while none is. Writes to a
// daemon block as a pipe would (the daemon paces a fast program for its
// subscribers); a daemon that went away fails them at once, and the shim
// goes on draining into the ring.
type router struct {
	mu    sync.Mutex
	conn  net.Conn
	ring  *ring
	hello Hello // what a daemon that connects now is told
}

// attach makes c the daemon's connection: it gets the Hello, the ring, and
// from then on everything live. A previous connection is dropped.
func (r *router) attach(c net.Conn) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		_ = r.conn.Close()
	}
	r.conn = nil
	if WriteJSON(c, FrameHello, r.hello) != nil || r.ring.drainTo(c) != nil {
		_ = c.Close()
		return
	}
	r.conn = c
	go r.watch(c)
}

// watch notices a daemon that went away while the program is quiet. The
// daemon sends nothing after the spec.
func (r *router) watch(c net.Conn) {
	var b [1]byte
	for {
		if _, err := c.Read(b[:]); err != nil {
			break
		}
	}
	r.mu.Lock()
	if r.conn == c {
		_ = c.Close()
		r.conn = nil
	}
	r.mu.Unlock()
}

// send writes one frame to the daemon; false when there is none (any more).
// Called with mu held.
func (r *router) send(kind byte, payload []byte) bool {
	if r.conn == nil {
		return false
	}
	if WriteFrame(r.conn, kind, payload) != nil {
		_ = r.conn.Close()
		r.conn = nil
		return false
	}
	return true
}

// splice moves n bytes, which the pipe behind pipe holds, to the daemon as
// one frame, by splice(2): the kernel hands the pipe's pages to the socket
// without a copy through the shim. It returns false, having moved nothing,
// when no daemon is connected; the caller then reads the bytes itself.
// Should the daemon go away within the frame, the frame is lost with the
// connection, as one written the usual way would be, and the bytes not yet
// moved stay in the pipe for the caller.
func (r *router) splice(kind byte, pipe int, n int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn == nil {
		return false
	}
	uc, ok := r.conn.(*net.UnixConn)
	if !ok {
		return false
	}
	sock, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	var hdr [5]byte
	hdr[0] = kind
	binary.BigEndian.PutUint32(hdr[1:], uint32(n))
	if _, err := r.conn.Write(hdr[:]); err != nil {
		_ = r.conn.Close()
		r.conn = nil
		return false
	}
	left := n
	var serr error
	werr := sock.Write(func(sfd uintptr) bool {
		for left > 0 {
			m, err := unix.Splice(pipe, nil, int(sfd), nil, left, unix.SPLICE_F_MOVE|unix.SPLICE_F_NONBLOCK)
			if m > 0 {
				left -= int(m)
			}
			switch {
			case err == unix.EAGAIN:
				return false // the socket is full: wait until it is not
			case err == unix.EINTR:
			case err != nil:
				serr = err
				return true
			case m == 0:
				serr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if serr == nil {
		serr = werr
	}
	if serr != nil {
		_ = r.conn.Close()
		r.conn = nil
		// A torn frame: whatever moved is lost with the connection.
		return false
	}
	return true
}

func (r *router) output(kind byte, b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.send(kind, b) {
		r.ring.append(kind, b)
	}
}

func (r *router) eof(kind byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if kind == FrameStdout {
		r.hello.StdoutEOF = true
		r.send(FrameStdoutEOF, nil)
	} else {
		r.hello.StderrEOF = true
		r.send(FrameStderrEOF, nil)
	}
}

func (r *router) exit(status int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.hello.Exited, r.hello.Status = true, status
	r.send(FrameExit, []byte(strconv.Itoa(status)))
}

func (r *router) log(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.send(FrameLog, []byte(msg))
}

func (r *router) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conn != nil {
		_ = r.conn.Close()
		r.conn = nil
	}
}
