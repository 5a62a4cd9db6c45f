package rawsock

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// pair returns a wrapped client and server end of a unix socket.
func pair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := Listener{l}.Accept()
		if err != nil {
			t.Error(err)
		}
		accepted <- c
	}()
	c, err := net.Dial("unix", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	client, server = Wrap(c), <-accepted
	if _, ok := client.(*Conn); !ok {
		t.Fatalf("Wrap gave %T", client)
	}
	if _, ok := server.(*Conn); !ok {
		t.Fatalf("Accept gave %T", server)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// A write far larger than the socket's buffer waits for the reader as
// often as it must, and every byte arrives in order; then the end.
func TestLargeWritesArriveWhole(t *testing.T) {
	client, server := pair(t)
	msg := make([]byte, 8<<20)
	for i := range msg {
		msg[i] = byte(i * 7)
	}
	errc := make(chan error, 1)
	go func() {
		n, err := server.Write(msg)
		if err == nil && n != len(msg) {
			err = io.ErrShortWrite
		}
		if err == nil {
			_, err = server.Write(nil) // a no-op
		}
		server.Close()
		errc <- err
	}()
	got, err := io.ReadAll(client)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, msg) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(msg))
	}
	if n, err := client.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read after the end: %d, %v", n, err)
	}
}

// Deadlines and Close end a waiting Read as they do on the socket itself.
func TestReadDeadlineAndClose(t *testing.T) {
	client, _ := pair(t)
	if err := client.SetReadDeadline(time.Now().Add(20 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	_, err := client.Read(make([]byte, 10))
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read past the deadline: %v", err)
	}
	_ = client.SetReadDeadline(time.Time{})
	done := make(chan error, 1)
	go func() {
		_, err := client.Read(make([]byte, 10))
		done <- err
	}()
	time.Sleep(10 * time.Millisecond)
	client.Close()
	if err := <-done; !errors.Is(err, net.ErrClosed) {
		t.Fatalf("read on a closed conn: %v", err)
	}
}

// A write to a peer that left fails (EPIPE or ECONNRESET), without a
// signal ending the test.
func TestWriteToClosedPeer(t *testing.T) {
	client, server := pair(t)
	client.Close()
	var err error
	for range 100 {
		if _, err = server.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "write" {
		t.Fatalf("write to a closed peer: %v", err)
	}
}

// Anything but a unix socket is left as it is.
func TestWrapLeavesOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	if Wrap(a) != a {
		t.Fatal("a net.Pipe was wrapped")
	}
}

// A write the peer does not read ends at the write deadline, as the
// daemon's stalled streams rely on.
func TestWriteDeadline(t *testing.T) {
	_, server := pair(t)
	if err := server.SetWriteDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	n, err := server.Write(make([]byte, 64<<20))
	if !errors.Is(err, os.ErrDeadlineExceeded) || n <= 0 || n >= 64<<20 {
		t.Fatalf("write to a peer that reads nothing: %d bytes, %v", n, err)
	}
}

// A unix socket in blocking mode is left as it is.
func TestWrapLeavesBlockingSockets(t *testing.T) {
	client, _ := pair(t)
	uc := client.(*Conn).UnixConn
	rc, err := uc.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), false) })
	if _, ok := Wrap(uc).(*Conn); ok {
		t.Fatal("a blocking socket was wrapped")
	}
	_ = rc.Control(func(fd uintptr) { _ = syscall.SetNonblock(int(fd), true) })
}
