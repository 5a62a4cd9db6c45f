package transport

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Listen opens "unix:/path" or "host:port" and enforces the token rule: a
// token is required beyond loopback, and on a unix socket whose directory
// others can enter or read. Loopback TCP and a socket in a private (0700)
// directory may go without one.
func Listen(addr, token string) (net.Listener, error) {
	if path, ok := strings.CutPrefix(addr, "unix:"); ok {
		return listenUnix(path, token)
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: want unix:/path or host:port: %w", addr, err)
	}
	if token == "" && !isLoopbackHost(host) {
		return nil, fmt.Errorf("listen address %q reaches beyond loopback: a token is required (--token-file)", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return l, nil
}

// isLoopbackHost is true for localhost and loopback IPs; an empty host
// (all interfaces) is not loopback.
func isLoopbackHost(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func listenUnix(path, token string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("listen address unix: has no path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("socket path %q: %w", path, err)
	}
	dir := filepath.Dir(abs)
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("socket directory %s: %w", dir, err)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 && token == "" {
		return nil, fmt.Errorf("socket directory %s has mode %04o, open to other users: use a private (0700) directory or set a token", dir, perm)
	}
	if err := removeStaleSocket(abs); err != nil {
		return nil, err
	}
	l, err := net.Listen("unix", abs)
	if err != nil {
		return nil, fmt.Errorf("listen on unix socket %s: %w", abs, err)
	}
	if err := os.Chmod(abs, 0o600); err != nil {
		_ = l.Close()
		return nil, fmt.Errorf("chmod socket %s: %w", abs, err)
	}
	return l, nil
}

// removeStaleSocket deletes a socket file nobody listens on any more, and
// refuses to take over one that is alive.
func removeStaleSocket(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("socket path %s: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("socket path %s exists and is not a socket", path)
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		_ = c.Close()
		return fmt.Errorf("socket %s is in use by a running daemon", path)
	}
	if err := os.Remove(path); err != nil {
		return fmt.Errorf("remove stale socket %s: %w", path, err)
	}
	return nil
}
