// Package daemontest runs an in-process sandtop daemon for tests, with a
// connected client, and tears it down (every process killed) at cleanup.
package daemontest

import (
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemon/transport"
	"sandtop/backend/envd"
)

// Env is a running daemon and a client for it.
type Env struct {
	Client      *envd.Client
	Daemon      *daemon.Daemon
	Socket      string // unix socket path; empty for StartTCP
	Addr        string // "http://127.0.0.1:port" for StartTCP; "unix:<Socket>" otherwise
	RuntimeRoot string
	Token       string

	mu      sync.Mutex
	clients []*envd.Client
}

// Dial returns another client for the same daemon (the token, if any, is
// added unless opts set one).
func (e *Env) Dial(opts ...envd.Option) *envd.Client {
	if e.Token != "" {
		opts = append([]envd.Option{envd.WithToken(e.Token)}, opts...)
	}
	c, err := envd.Dial(e.Addr, opts...)
	if err != nil {
		panic(err) // Addr is ours and well formed
	}
	e.mu.Lock()
	e.clients = append(e.clients, c)
	e.mu.Unlock()
	return c
}

// Start runs a daemon on a unix socket in a private temp dir. Zero fields of
// cfg get defaults: RuntimeRoot under t.TempDir(), Env a minimal PATH/LANG.
func Start(t testing.TB, cfg daemon.Config) *Env {
	t.Helper()
	// Socket paths are limited to ~108 bytes; t.TempDir() can be longer.
	dir, err := os.MkdirTemp("", "sandtopd-")
	if err != nil {
		t.Fatalf("daemontest: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	l, err := transport.Listen("unix:"+sock, cfg.Token)
	if err != nil {
		t.Fatalf("daemontest: %v", err)
	}
	return serve(t, cfg, l, "unix:"+sock, sock)
}

// StartTCP runs a daemon on 127.0.0.1 (for HTTP/1.1, JSON and token tests).
func StartTCP(t testing.TB, cfg daemon.Config) *Env {
	t.Helper()
	l, err := transport.Listen("127.0.0.1:0", cfg.Token)
	if err != nil {
		t.Fatalf("daemontest: %v", err)
	}
	return serve(t, cfg, l, "http://"+l.Addr().String(), "")
}

// StartAt runs a daemon on hostPort, e.g. a non-loopback address for a
// Kubernetes pod proxy to dial (it refuses loopback); cfg.Token is needed
// there.
func StartAt(t testing.TB, cfg daemon.Config, hostPort string) *Env {
	t.Helper()
	l, err := transport.Listen(hostPort, cfg.Token)
	if err != nil {
		t.Fatalf("daemontest: %v", err)
	}
	return serve(t, cfg, l, "http://"+l.Addr().String(), "")
}

func serve(t testing.TB, cfg daemon.Config, l net.Listener, addr, sock string) *Env {
	t.Helper()
	if cfg.RuntimeRoot == "" {
		cfg.RuntimeRoot = filepath.Join(t.TempDir(), "runtime")
	}
	if cfg.Env == nil {
		cfg.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C.UTF-8"}
	}
	d, err := daemon.New(cfg)
	if err != nil {
		l.Close()
		t.Fatalf("daemontest: %v", err)
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(l) }()
	e := &Env{Daemon: d, Socket: sock, Addr: addr, RuntimeRoot: d.RuntimeRoot(), Token: cfg.Token}
	e.Client = e.Dial()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if err := d.KillAll(ctx); err != nil {
			t.Errorf("daemontest: kill all: %v", err)
		}
		e.mu.Lock()
		for _, c := range e.clients {
			c.Close() // idle h2 connections would hold Shutdown for a second
		}
		e.mu.Unlock()
		if err := d.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("daemontest: shutdown: %v", err)
		}
		if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("daemontest: serve: %v", err)
		}
	})
	return e
}
