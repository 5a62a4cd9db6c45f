// Package daemon is sandtop's sandbox daemon. It serves envd's process.Process
// service with envd's wire contract and semantics (minus envd's known faults),
// and, unless Config.Compat is set, the sandtop.v1.Supervisor extension.
package daemon

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"sandtop/backend/daemon/runtimeroot"
	"sandtop/backend/daemon/shimclient"
	"sandtop/backend/daemon/transport"
	"sandtop/buildinfo"
)

// Version is reported by Supervisor/Hello: the release and the commit of
// the build, so a client can tell a daemon left from an older build.
var Version = buildinfo.Version()

const (
	defaultReplayBytes   = 256 << 10
	defaultStallTimeout  = 2 * time.Second
	defaultExitRetention = 60 * time.Second
	// lagWindow is how far (in bytes) a subscriber may trail the newest
	// output before the stall clock starts for it. It is shared by all of a
	// process's subscribers, so a process never holds more than
	// ReplayBytes+lagWindow of output however much it writes.
	lagWindow = 4 << 20
	// plainLagWindow is lagWindow for a process started without a shim
	// (E2B's SDK starts every command so): envd's own readers trail its
	// processes by no more than one 32 KiB read. Eight 64 KiB events (what
	// a JSON client gets, see jsonEventBytes) streamed to E2B's SDK as fast
	// as 1 MiB did, with half a MiB less of the daemon's heap. (256 KiB
	// saved a little more, but then a reader starved of the CPU for the
	// stall limit was cut sooner.)
	plainLagWindow = 512 << 10
)

// Config configures a Daemon. The zero value is usable except for RuntimeRoot.
type Config struct {
	RuntimeRoot   string        // dir (0700) for state the seam publishes; created if missing
	Env           []string      // sandbox-wide base env ("K=V"), layered after PATH/HOME/USER/LOGNAME
	Compat        bool          // serve only envd's services: process.Process, filesystem.Filesystem, /files
	ReplayBytes   int           // per process, 0 → 256 KiB
	StallTimeout  time.Duration // 0 → 2s
	ExitRetention time.Duration // 0 → 60s
	Token         string
	WriteTimeout  time.Duration // one write to a client, 0 → 15s
	// AuthTimeout closes a connection that has carried no authorised
	// request for this long after it was accepted; 0 → 10s.
	AuthTimeout time.Duration
	Logger      *slog.Logger // nil → discard
	// TLS, when set, serves TCP connections over TLS (HTTP/1.1), for
	// clients that dial the daemon directly rather than through a proxy.
	TLS *tls.Config

	// ReapAllOrphans makes the daemon reap every child it did not start
	// itself. Set it only when the daemon owns its OS process (RunServe
	// does). Left false, as for a daemon embedded in a test binary, the
	// daemon reaps only orphans that belong to a group or session it started,
	// so it never steals the wait status of a child some other code forked.
	ReapAllOrphans bool
}

// Daemon holds the managed processes and serves them over HTTP.
type Daemon struct {
	cfg     Config
	log     *slog.Logger
	root    string // runtime root with symlinks resolved
	self    selfInfo
	reg     *registry
	cpu     *cpuSampler
	idents  *identityCache
	units   plainUnits
	watch   watchTable
	settled settledStates
	handler http.Handler
	// defaults: what POST /init set (user, workdir, env, token).
	defaults sandboxDefaults

	done     chan struct{} // closed by Shutdown; live streams return
	doneOnce sync.Once

	srvMu   sync.Mutex
	servers []*http.Server

	// parked: the idle streams whose connections the daemon holds (see
	// park), for the shutdown to end.
	parkedMu sync.Mutex
	parked   map[*parkedStream]struct{}

	// spares keeps a shim started ahead of the next session-dir Start.
	spares *shimclient.Spares

	// shimKey is what a shim asks of a daemon that reconnects (see
	// shimclient.KeyFile).
	shimKey string
}

// New validates cfg, prepares the runtime root, makes this OS process a child
// subreaper and returns a daemon that is ready to Serve.
func New(cfg Config) (*Daemon, error) {
	if cfg.RuntimeRoot == "" {
		return nil, errors.New("daemon: Config.RuntimeRoot is empty")
	}
	if cfg.ReplayBytes < 0 {
		return nil, fmt.Errorf("daemon: Config.ReplayBytes is negative (%d)", cfg.ReplayBytes)
	}
	if cfg.ReplayBytes == 0 {
		cfg.ReplayBytes = defaultReplayBytes
	}
	if cfg.StallTimeout <= 0 {
		cfg.StallTimeout = defaultStallTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = defaultWriteTimeout
	}
	if cfg.AuthTimeout <= 0 {
		cfg.AuthTimeout = transport.DefaultAuthTimeout
	}
	if cfg.ExitRetention <= 0 {
		cfg.ExitRetention = defaultExitRetention
	}
	for _, kv := range cfg.Env {
		if k, _, ok := cutEnv(kv); !ok || k == "" {
			return nil, fmt.Errorf("daemon: Config.Env entry %q is not K=V", kv)
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	root, err := prepareRoot(cfg.RuntimeRoot, log)
	if err != nil {
		return nil, err
	}
	self, err := currentSelf()
	if err != nil {
		return nil, err
	}
	d := &Daemon{
		cfg:    cfg,
		log:    log,
		root:   root,
		self:   self,
		reg:    newRegistry(cfg.ExitRetention),
		cpu:    newCPUSampler(),
		idents: newIdentityCache(),
		done:   make(chan struct{}),
	}
	d.defaults.token = cfg.Token
	d.reg.crowdGone = d.forgetGone
	d.shimKey = shimclient.LoadKey(root, log)
	d.spares = shimclient.NewSpares(d.startShim, log)
	d.handler = d.buildHandler()
	theReaper.register(d)
	if !cfg.Compat {
		d.adoptShims()
	}
	return d, nil
}

// prepareRoot creates the runtime root (0700) if missing and returns it with
// symlinks resolved, so confinement checks compare real paths.
func prepareRoot(dir string, log *slog.Logger) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("daemon: runtime root %q: %w", dir, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return "", fmt.Errorf("daemon: create runtime root %s: %w", abs, err)
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("daemon: resolve runtime root %s: %w", abs, err)
	}
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("daemon: runtime root %s: %w", real, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("daemon: runtime root %s is not a directory", real)
	} else if fi.Mode().Perm()&0o077 != 0 {
		log.Warn("runtime root is readable by others", "path", real, "mode", fi.Mode().Perm().String())
	}
	return real, nil
}

// forgetGone drops what the daemon's caches of the process table still
// hold of processes that have ended: they forget one only when a later
// look no longer sees it, and after a crowd there may be none for long.
func (d *Daemon) forgetGone() {
	pids := allPids()
	if pids == nil {
		return // no /proc to tell: keep everything
	}
	alive := make(map[int]bool, len(pids))
	for _, pid := range pids {
		alive[pid] = true
	}
	d.cpu.forgetExcept(alive)
	d.idents.forgetExcept(alive)
	d.units.forgetExcept(alive)
	d.watch.forgetExcept(alive)
}

// RuntimeRoot is the runtime root with symlinks resolved.
func (d *Daemon) RuntimeRoot() string { return d.root }

// isShuttingDown: Shutdown has begun.
func (d *Daemon) isShuttingDown() bool {
	select {
	case <-d.done:
		return true
	default:
		return false
	}
}

// runtimeRoot is the runtime root the Supervisor's reads are confined to.
func (d *Daemon) runtimeRoot() runtimeroot.Root {
	return runtimeroot.Root{Path: d.root, Configured: d.cfg.RuntimeRoot}
}

// shuttingDown is closed once Shutdown starts.
func (d *Daemon) shuttingDown() <-chan struct{} { return d.done }
