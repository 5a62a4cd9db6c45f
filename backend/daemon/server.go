package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"net/http"
	"syscall"
	"time"

	"sandtop/backend/daemon/fsservice"
	"sandtop/backend/daemon/transport"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/backend/rawsock"
	"sandtop/backend/shim"
)

// compressMinBytes keeps gzip off process output: one data event is at most
// a batch of sendBatchBytes (shim.MaxOutputFrame; about 4/3 of that in
// JSON), and gzip costs most of a stream's throughput (two thirds of the
// CPU of a 1 GiB collect, when it was on). Large unary answers (a
// directory listing) still compress.
const compressMinBytes = 4 * shim.MaxOutputFrame

// buildHandler assembles the mux: /health, /init, /envs, /metrics,
// process.Process, envd's filesystem half (filesystem.Filesystem and
// /files) and (unless Compat) the
// Supervisor extension, all behind Guard.
func (d *Daemon) buildHandler() http.Handler {
	opts := d.HandlerOptions()
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
	// envd's control routes (sandboxinit.go, metrics.go).
	mux.HandleFunc("POST /init", d.postInit)
	mux.HandleFunc("GET /envs", d.getEnvs)
	mux.HandleFunc("GET /metrics", d.getMetrics)
	return d.Guard(mux)
}

// Handler returns the whole HTTP surface, auth and /health included.
func (d *Daemon) Handler() http.Handler { return d.handler }

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
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			ctx = context.WithValue(ctx, connKey{}, c)
			return d.connContext(transport.ConnContext(ctx, c), c)
		},
		IdleTimeout: 640 * time.Second, // above common proxy idle timeouts, as envd
		ErrorLog:    nil,
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
	// A process stream writes messages of up to 1 MiB (see rawsock).
	var gated net.Listener = transport.Probation(rawsock.Listener{Listener: l}, d.cfg.AuthTimeout)
	if d.cfg.TLS != nil {
		// Outermost, so the server sees *tls.Conn (transport.ConnContext unwraps it).
		gated = tls.NewListener(gated, d.cfg.TLS)
	}
	if err := srv.Serve(gated); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Shutdown stops serving: open streams end with Unavailable and the
// listeners close. Processes keep running.
func (d *Daemon) Shutdown(ctx context.Context) error {
	d.doneOnce.Do(func() { close(d.done) })
	// net/http's Shutdown knows nothing of the connections parked streams
	// took from it.
	d.wakeParked()
	theReaper.unregister(d)
	d.spares.Close()
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

// KillAll sends SIGKILL to every managed process and all that descends from
// it, and waits for every end event.
func (d *Daemon) KillAll(ctx context.Context) error {
	procs := d.reg.liveProcs()
	// A started process may have moved work into new sessions (the seam's
	// wrapper runs setsid): find those groups while the tree still links
	// them, so that killing the started groups does not orphan them.
	for _, p := range procs {
		// Stopped, a leader cannot fork more while the tree is read. A
		// reaped leader's pid may be someone else's: it is left alone.
		if !p.leaderGone() {
			_ = syscall.Kill(int(p.pid), syscall.SIGSTOP)
		}
	}
	escaped, inOurGroup := d.descendants(procs)
	for _, p := range procs {
		_ = d.signalProc(p, syscall.SIGKILL)
		if p.isPTY() && !p.leaderGone() {
			_ = killGroup(int(p.pid), syscall.SIGKILL) // its session's first group
		}
	}
	for _, pgid := range escaped {
		_ = killGroup(pgid, syscall.SIGKILL)
	}
	for _, pid := range inOurGroup {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	d.killAllEscapees()
	d.killShimless()
	for _, p := range procs {
		select {
		case <-p.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}
