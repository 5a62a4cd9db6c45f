package shim

import (
	"errors"
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// The first message on a shim's socket is one byte that carries the
// program's stdin as an SCM_RIGHTS file descriptor, or nothing when the
// program gets none. The stdin cannot be the shim's fd 0: the daemon starts
// a shim before the Start it will serve exists (a spare, so the Go runtime's
// start is not paid inside a spawn), and only then learns the stdin mode.
const (
	stdinNone byte = 'n'
	stdinFD   byte = 'f'
)

// SendStdin hands f (nil: no stdin) to the shim at the other end of c.
func SendStdin(c *net.UnixConn, f *os.File) error {
	if f == nil {
		_, _, err := c.WriteMsgUnix([]byte{stdinNone}, nil, nil)
		return err
	}
	_, _, err := c.WriteMsgUnix([]byte{stdinFD}, unix.UnixRights(int(f.Fd())), nil)
	return err
}

// RecvStdin receives what SendStdin sent: the stdin file, or nil.
func RecvStdin(c *net.UnixConn) (*os.File, error) {
	var b [1]byte
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := c.ReadMsgUnix(b[:], oob)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		return nil, errors.New("shim: the daemon closed the socket before sending stdin")
	}
	var fds []int
	if oobn > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, fmt.Errorf("shim: stdin message: %w", err)
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	switch {
	case b[0] == stdinNone && len(fds) == 0:
		return nil, nil
	case b[0] == stdinFD && len(fds) == 1:
		// Received descriptors are inheritable; the program gets this one
		// as its fd 0 alone.
		unix.CloseOnExec(fds[0])
		return os.NewFile(uintptr(fds[0]), "stdin"), nil
	}
	for _, fd := range fds {
		_ = unix.Close(fd)
	}
	return nil, fmt.Errorf("shim: unexpected stdin message %q with %d descriptors", b[0], len(fds))
}
