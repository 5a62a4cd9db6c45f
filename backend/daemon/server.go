package daemon

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon/fsservice"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
)

const tokenHeader = "X-Access-Token"

// compressMinBytes keeps gzip off process output: one data event is at most
// readBufSize of output (about 4/3 of that in JSON), and gzip on
// incompressible output costs most of the throughput. Large unary answers
// (group tables, directory listings) still compress.
const compressMinBytes = 4 * readBufSize

// buildHandler assembles the mux: /health, process.Process, envd's
// filesystem half (filesystem.Filesystem and /files) and (unless Compat) the
// Supervisor extension, all behind the token check.
func (d *Daemon) buildHandler() http.Handler {
	opts := []connect.HandlerOption{connect.WithCompressMinBytes(compressMinBytes)}
	mux := http.NewServeMux()
	mux.Handle(processconnect.NewProcessHandler(processService{d}, opts...))
	files := fsservice.New(fsservice.Config{Identify: d.fsIdentity, Keepalive: keepaliveInterval, Done: d.done, Logger: d.log})
	mux.Handle(files.Handler(opts...))
	mux.Handle("/files", files.FilesHandler())
	if !d.cfg.Compat {
		mux.Handle(sandtopv1connect.NewSupervisorHandler(supervisorService{d}, opts...))
	}
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNoContent)
	})
	return d.requireToken(mux)
}

// Handler returns the whole HTTP surface, auth and /health included.
func (d *Daemon) Handler() http.Handler { return d.handler }

// requireToken checks X-Access-Token in constant time when a token is set.
// /health stays open, as in envd, so clients can tell "down" from "denied".
func (d *Daemon) requireToken(next http.Handler) http.Handler {
	if d.cfg.Token == "" {
		return next
	}
	want := sha256.Sum256([]byte(d.cfg.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			next.ServeHTTP(w, r)
			return
		}
		got := sha256.Sum256([]byte(r.Header.Get(tokenHeader)))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"code":"unauthenticated","message":"missing or invalid X-Access-Token"}`))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Serve serves h2c and HTTP/1.1 on l until Shutdown. It returns nil after a
// Shutdown.
func (d *Daemon) Serve(l net.Listener) error {
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{
		Handler:           d.handler,
		Protocols:         &protos,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       640 * time.Second, // above common proxy idle timeouts, as envd
		ErrorLog:          nil,
	}
	d.srvMu.Lock()
	select {
	case <-d.done:
		d.srvMu.Unlock()
		_ = l.Close()
		return nil
	default:
	}
	d.servers = append(d.servers, srv)
	d.srvMu.Unlock()
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops serving: open streams end with Unavailable and the
// listeners close. Processes keep running.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.doneOnce.Do(func() { close(d.done) })
	d.srvMu.Lock()
	servers := d.servers
	d.srvMu.Unlock()
	var errs []error
	for _, srv := range servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err)
			_ = srv.Close()
		}
	}
	return errors.Join(errs...)
}

// KillAll sends SIGKILL to every managed group and waits for every end event.
func (d *Daemon) KillAll(ctx context.Context) error {
	procs := d.reg.liveProcs()
	// A started process may have moved work into new sessions (the seam's
	// wrapper runs setsid): find those groups while the tree still links
	// them, so that killing the started groups does not orphan them.
	escaped := d.descendantGroups(procs)
	for _, p := range procs {
		_ = d.signalProc(p, syscall.SIGKILL)
	}
	for _, pgid := range escaped {
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
