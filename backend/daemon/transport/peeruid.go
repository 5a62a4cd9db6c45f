package transport

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
)

// peerKey holds, in a TCP connection's context, why its peer may not use a
// daemon that has no token (nil: it may).
type peerKey struct{}

// OwnUserOnly records in a TCP connection's context (http.Server's
// ConnContext) whether the peer is uid, the daemon's own user: a daemon
// without a token serves no one else over TCP. PeerRefusal reads it. A unix
// socket is not checked here: Listen keeps it to a private directory.
func OwnUserOnly(ctx context.Context, c net.Conn, uid uint32) context.Context {
	local, lok := c.LocalAddr().(*net.TCPAddr)
	remote, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return ctx
	}
	peer, err := tcpPeerUID(local, remote)
	switch {
	case err != nil:
		err = fmt.Errorf("this daemon has no token and serves only its own user; the connection's user is unknown (%v)", err)
	case peer != uid:
		err = fmt.Errorf("this daemon has no token and serves only its own user (uid %d); the connection comes from uid %d", uid, peer)
	}
	return context.WithValue(ctx, peerKey{}, err)
}

// PeerRefusal says why the peer of the connection a request came on may
// not use the daemon (ctx is the request's), or nil.
func PeerRefusal(ctx context.Context) error {
	err, _ := ctx.Value(peerKey{}).(error)
	return err
}

// tcpPeerUID finds the user that owns the other end of a local TCP
// connection, as identd does: the kernel's socket tables list the client's
// socket with its addresses swapped relative to ours, and with its owner's
// uid. A client outside this network namespace is not found.
func tcpPeerUID(local, remote *net.TCPAddr) (uint32, error) {
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(table)
		if errors.Is(err, os.ErrNotExist) {
			continue // no IPv6
		}
		if err != nil {
			return 0, err
		}
		uid, found, err := findSocketOwner(f, remote, local)
		f.Close()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", table, err)
		}
		if found {
			return uid, nil
		}
	}
	return 0, fmt.Errorf("no local socket %s -> %s", remote, local)
}

// findSocketOwner scans one socket table for the socket bound to src and
// connected to dst, and returns its uid.
func findSocketOwner(r io.Reader, src, dst *net.TCPAddr) (uint32, bool, error) {
	sc := bufio.NewScanner(r)
	sc.Scan() // header
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 8 {
			continue
		}
		if !sameEndpoint(f[1], src) || !sameEndpoint(f[2], dst) {
			continue
		}
		uid, err := strconv.ParseUint(f[7], 10, 32)
		if err != nil {
			return 0, false, fmt.Errorf("uid field %q: %w", f[7], err)
		}
		return uint32(uid), true, nil
	}
	return 0, false, sc.Err()
}

// sameEndpoint compares a table's "ADDR:PORT" (the address as 32-bit words
// in host byte order, the port in hex) with a; IPv4 and IPv4-mapped IPv6
// addresses are the same endpoint.
func sameEndpoint(field string, a *net.TCPAddr) bool {
	hexAddr, hexPort, ok := strings.Cut(field, ":")
	if !ok {
		return false
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil || int(port) != a.Port {
		return false
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return false
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.NativeEndian.PutUint32(ip[i:], binary.BigEndian.Uint32(raw[i:]))
	}
	return ip.Equal(a.IP)
}
