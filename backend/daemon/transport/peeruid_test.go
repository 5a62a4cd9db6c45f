package transport_test

import (
	"context"
	"net"
	"os"
	"testing"

	"sandtop/backend/daemon/transport"
)

// A loopback connection's peer is found in the kernel's socket table as
// this process's user, and only that user passes.
func TestOwnUserOnlyFindsTheLoopbackPeer(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	client, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()

	self := uint32(os.Getuid())
	if err := transport.PeerRefusal(transport.OwnUserOnly(context.Background(), server, self)); err != nil {
		t.Errorf("own user refused: %v", err)
	}
	if err := transport.PeerRefusal(transport.OwnUserOnly(context.Background(), server, self+1)); err == nil {
		t.Errorf("the connection of uid %d passed as uid %d", self, self+1)
	}
	if err := transport.PeerRefusal(context.Background()); err != nil {
		t.Errorf("a context with no peer recorded is refused: %v", err)
	}
}
