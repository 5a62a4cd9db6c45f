package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"sandtop/backend/daemon/transport"
	"sandtop/config"
)

// ServeOptions are the settings of `sandtop serve`.
type ServeOptions struct {
	Listen     string // "unix:/path" or "host:port"; empty → unix:<runtime dir>/sandtop.sock
	TokenFile  string // file holding the access token; empty → no token
	Compat     bool   // serve only envd's services, as stock envd does
	StateDir   string // holds runtime/ (the runtime root) and daemon.log; empty → DefaultStateDir()
	KillOnExit bool   // SIGKILL every managed group when serving stops
	Env        []string
	// TLSCert and TLSKey, both set, serve TCP over TLS with that
	// certificate and key (PEM files).
	TLSCert, TLSKey string
	// Ready, if set, is called once the listener is open.
	Ready func(addr string)
	// MemoryDumps, if set, is a directory a memory dump is written to on
	// each SIGUSR1 (see watchMemoryDumps); for measuring.
	MemoryDumps string
}

// DefaultStateDir is $XDG_STATE_HOME/sandtop, else ~/.local/state/sandtop.
func DefaultStateDir() string {
	if d := os.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "sandtop")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), fmt.Sprintf("sandtop-%d", os.Getuid()), "state")
	}
	return filepath.Join(home, ".local", "state", "sandtop")
}

// DefaultSocket is $XDG_RUNTIME_DIR/sandtop/sandtop.sock, else
// /tmp/sandtop-<uid>/sandtop.sock; its directory is created 0700.
func DefaultSocket() string {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("sandtop-%d", os.Getuid()))
	if d := os.Getenv("XDG_RUNTIME_DIR"); d != "" {
		dir = filepath.Join(d, "sandtop")
	}
	return filepath.Join(dir, "sandtop.sock")
}

// RunServe runs the daemon in the foreground until ctx is done, then shuts
// down (and kills every managed group if KillOnExit). The daemon owns this
// OS process, so it reaps every orphan.
func RunServe(ctx context.Context, o ServeOptions) error {
	state := o.StateDir
	if state == "" {
		state = DefaultStateDir()
	}
	if err := os.MkdirAll(state, 0o700); err != nil {
		return fmt.Errorf("create state dir %s: %w", state, err)
	}
	// Before anything is adopted, or a socket taken over.
	lock, err := lockStateDir(state)
	if err != nil {
		return err
	}
	defer lock.release()
	logFile, err := os.OpenFile(filepath.Join(state, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("open log: %w", err)
	}
	defer logFile.Close()
	log := slog.New(slog.NewJSONHandler(logFile, nil))

	token, err := readToken(o.TokenFile)
	if err != nil {
		return err
	}
	tlsConfig, err := serveTLS(o)
	if err != nil {
		return err
	}
	addr := o.Listen
	if addr == "" {
		sock := DefaultSocket()
		if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
			return fmt.Errorf("create socket dir: %w", err)
		}
		addr = "unix:" + sock
	}
	d, err := New(Config{
		RuntimeRoot:    filepath.Join(state, "runtime"),
		Env:            o.Env,
		Compat:         o.Compat,
		Token:          token,
		Logger:         log,
		ReapAllOrphans: true,
		TLS:            tlsConfig,
	})
	if err != nil {
		return err
	}
	if o.MemoryDumps != "" {
		if err := watchMemoryDumps(o.MemoryDumps); err != nil {
			return err
		}
	}
	l, err := transport.Listen(addr, token)
	if err != nil {
		return err
	}
	log.Info("serving", "addr", l.Addr().String(), "compat", o.Compat, "token", token != "", "tls", tlsConfig != nil, "pid", os.Getpid())
	if o.Ready != nil {
		o.Ready(l.Addr().String())
	}
	served := make(chan error, 1)
	go func() { served <- d.Serve(l) }()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if o.KillOnExit {
		if kerr := d.KillAll(stopCtx); kerr != nil {
			log.Warn("kill on exit", "err", kerr)
		}
	}
	if serr := d.Shutdown(stopCtx); serr != nil && err == nil {
		err = serr
	}
	if strings.HasPrefix(addr, "unix:") {
		_ = os.Remove(strings.TrimPrefix(addr, "unix:"))
	}
	log.Info("stopped")
	return err
}

func readToken(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	return config.ReadTokenFile(path)
}

// serveTLS loads the serving certificate, if one is given. TLS needs a TCP
// address: a unix socket is private to its machine already.
func serveTLS(o ServeOptions) (*tls.Config, error) {
	if o.TLSCert == "" && o.TLSKey == "" {
		return nil, nil
	}
	if o.TLSCert == "" || o.TLSKey == "" {
		return nil, errors.New("TLS needs both a certificate and its key (--tls-cert and --tls-key)")
	}
	if strings.HasPrefix(o.Listen, "unix:") || o.Listen == "" {
		return nil, errors.New("TLS is for a TCP address (--listen HOST:PORT); a unix socket needs none")
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("TLS certificate %s with key %s: %w", o.TLSCert, o.TLSKey, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}, nil
}
