package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"syscall"
	"time"
)

// probeTimeout bounds one health check of the socket.
const probeTimeout = 2 * time.Second

// ProbeTimeout bounds a health check, and the first call of a caller that
// lets that call stand in for one (see Unchecked).
const ProbeTimeout = probeTimeout

// Health is what a probe of the socket found.
type Health struct {
	// Listening is true when something accepted a connection on the socket.
	Listening bool
	// Healthy is true when it also answered GET /health with a 2xx.
	Healthy bool
	// PID is the daemon's pid from the socket's peer credentials (0 when
	// nothing is listening).
	PID int
	// Err says why the daemon is not healthy.
	Err error
}

// Probe checks the daemon behind socket: does it accept, who is it, and
// does it answer /health.
func Probe(ctx context.Context, socket string) Health {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return Health{Err: err}
	}
	h := Health{Listening: true, PID: peerPID(conn)}
	if err := getHealth(ctx, conn); err != nil {
		h.Err = err
		return h
	}
	h.Healthy = true
	return h
}

// peerPID reads SO_PEERCRED: for a listening unix socket it names the
// process that called listen(), so no pid file can go stale.
func peerPID(conn net.Conn) int {
	uc, ok := conn.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	var pid int
	_ = raw.Control(func(fd uintptr) {
		cred, err := syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
		if err == nil && int(cred.Uid) == os.Getuid() {
			pid = int(cred.Pid)
		}
	})
	return pid
}

// getHealth sends one HTTP/1.1 GET /health over an already open connection.
func getHealth(ctx context.Context, conn net.Conn) error {
	used := false
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			if used {
				return nil, errors.New("probe connection already used")
			}
			used = true
			return conn, nil
		},
		DisableKeepAlives: true,
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://sandtop/health", nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		conn.Close()
		return fmt.Errorf("health check: %w", err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("health check: %s", resp.Status)
	}
	return nil
}
