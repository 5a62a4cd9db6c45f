package daemon

import (
	"bufio"
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
