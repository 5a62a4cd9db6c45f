package seam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/envd"
	"sandtop/backend/gen/filesystem/filesystemconnect"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/backend/seam/control"
)

// RuntimeConfig configures a Runtime.
type RuntimeConfig struct {
	// Known is what an earlier runtime of the same sandbox learnt of its
	// daemon (Runtime.Known). Given, the runtime asks no Hello and probes
	// nothing: a fleet that re-dials a sandbox every minute for its counts
	// needs the daemon's answer once.
	Known *Known
	// RuntimeRoot holds the private state directories (processes/<id>/). It
	// must be absolute. Empty means the root the daemon reports in Hello,
	// or on stock envd (which reports none) DefaultRuntimeRootIn under the
	// sandbox user's home.
	RuntimeRoot string
	// FallbackRuntimeRoot is the root to use when RuntimeRoot is empty and
	// the daemon names none (stock envd); empty means DefaultRuntimeRootIn.
	FallbackRuntimeRoot string
	// AgentWorkspace is a DeepSeek Harness agent's workspace, whose
	// <workspace>/.dsh-e2b is read for agents' groups besides the roots
	// found from the process table; empty means only those.
	AgentWorkspace string
	// Cwd is the shared working directory: relative PATH hits of
	// ResolveExecutable are resolved against it. Must be absolute.
	Cwd string
	// PollInterval is the cadence of liveness and exit-status checks. Must
	// be positive.
	PollInterval time.Duration
	// Bash is bash's absolute path in the sandbox; empty means /bin/bash.
	Bash string
	// Stdout and Stderr receive "inherit" output; nil means os.Stdout and
	// os.Stderr.
	Stdout, Stderr io.Writer
	// PipeWindow bounds the bytes a piped output stream buffers before the
	// stream blocks; 0 means 1 MiB.
	PipeWindow int
	// DisableExtension makes the runtime use control commands even when the
	// daemon offers the Supervisor extension.
	DisableExtension bool
	// SandboxGone, when set, recognises errors that prove the sandbox no
	// longer exists (for example E2B's "sandbox not found"). Connection
	// failures are recognised without it, after a failed health check.
	SandboxGone func(error) bool
	// Logger receives background failures; nil discards them.
	Logger *slog.Logger
	// Upload writes a file into the sandbox (envd's /files); NewRuntime
	// sets it from the client. Without it, groups on stock envd run under
	// the bash wrapper.
	Upload func(ctx context.Context, path string, body io.Reader) error
	// SupervisorBinary is the local build of sandtop that a spawn on stock
	// envd uploads into the sandbox once, to supervise its groups; empty
	// means this executable, NoSupervisor the bash wrapper for every group.
	SupervisorBinary string
}

// Runtime is the seam's process service over one sandbox. Create it with
// NewRuntime; it is safe for concurrent use.
type Runtime struct {
	cfg     RuntimeConfig
	info    DaemonInfo
	proc    processconnect.ProcessClient
	control control.Plane
	runner  control.Runner
	log     *slog.Logger
	// underShim: sandtop's daemon runs each spawn under its per-group
	// supervisor (the shim capability); no wrapper runs in the sandbox.
	underShim bool

	// bg outlives every spawn context; Dispose cancels it last.
	bg       context.Context
	cancelBg context.CancelFunc

	envMu   sync.Mutex
	baseEnv []string // the sandbox's environment, not yet scrubbed

	mu        sync.Mutex
	disposing bool
	live      map[*Handle]struct{}
	setups    sync.WaitGroup
	abortAll  context.CancelFunc // aborts pending spawns when disposing
	setupCtx  context.Context
	jobs      jobSet // background finalisers (spill removal, release)

	terms terminalSet // terminals spawned or attached, until proven empty

	// sup: the standalone supervisor on stock envd, once a spawn decided.
	sup supervisorState
}

// NewRuntimeClients builds a Runtime over the two Connect clients. sup may
// be nil (stock envd). It calls Hello to discover the extension.
func NewRuntimeClients(ctx context.Context, proc processconnect.ProcessClient, sup sandtopv1connect.SupervisorClient, cfg RuntimeConfig) (*Runtime, error) {
	return newRuntime(ctx, proc, sup, nil, cfg)
}

// newRuntime is NewRuntimeClients with envd's filesystem service, which
// (on sandtop's daemon) removes files without starting a process for rm.
func newRuntime(ctx context.Context, proc processconnect.ProcessClient, sup sandtopv1connect.SupervisorClient, fs filesystemconnect.FilesystemClient, cfg RuntimeConfig) (*Runtime, error) {
	if proc == nil {
		return nil, errors.New("runtime needs a process client")
	}
	if cfg.PollInterval <= 0 {
		return nil, fmt.Errorf("runtime poll interval must be positive (got %v)", cfg.PollInterval)
	}
	if !strings.HasPrefix(cfg.Cwd, "/") {
		return nil, fmt.Errorf("runtime cwd %q must be an absolute path", cfg.Cwd)
	}
	if cfg.Bash == "" {
		cfg.Bash = "/bin/bash"
	}
	if cfg.Stdout == nil {
		cfg.Stdout = os.Stdout
	}
	if cfg.Stderr == nil {
		cfg.Stderr = os.Stderr
	}
	if cfg.PipeWindow <= 0 {
		cfg.PipeWindow = 1 << 20
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	runner := control.Runner{Process: proc, Bash: cfg.Bash, Env: map[string]string{"BASH_ENV": "", "ENV": ""}}
	var plane control.Plane = control.NewCompat(runner)
	var underShim bool
	var baseEnv []string
	info := DaemonInfo{Version: "envd (no sandtop extension)", Capabilities: []string{"compat"}}
	if k := cfg.Known; k != nil {
		info, baseEnv, underShim = k.info, k.baseEnv, k.underShim
		if info.Extension {
			plane = control.Extension{Supervisor: sup, Files: fs, Runner: runner}
		}
		if cfg.RuntimeRoot == "" {
			cfg.RuntimeRoot = k.runtimeRoot
		}
	} else if sup != nil && !cfg.DisableExtension {
		hello, err := sup.Hello(ctx, connect.NewRequest(&sandtopv1.HelloRequest{}))
		switch {
		case err == nil:
			info = DaemonInfo{Extension: true, Version: hello.Msg.GetVersion(), Hostname: hello.Msg.GetHostname(),
				Capabilities: hello.Msg.GetCapabilities(), RuntimeRoot: hello.Msg.GetRuntimeRoot()}
			plane = control.Extension{Supervisor: sup, Files: fs, Runner: runner}
			// The daemon says what a command's environment is, which saves
			// the probe (a shell and four tools) on every CLI call.
			baseEnv = hello.Msg.GetEnvironment()
			if cfg.RuntimeRoot == "" {
				cfg.RuntimeRoot = hello.Msg.GetRuntimeRoot()
			}
			// The daemon only creates directories under its own root.
			underShim = slices.Contains(hello.Msg.GetCapabilities(), capShim) && cfg.RuntimeRoot == hello.Msg.GetRuntimeRoot()
		case connect.CodeOf(err) == connect.CodeUnimplemented || connect.CodeOf(err) == connect.CodeNotFound:
			// Stock envd: control commands it is.
		default:
			return nil, fmt.Errorf("hello to the sandbox daemon: %w", err)
		}
	}
	if cfg.RuntimeRoot == "" && !info.Extension {
		cfg.RuntimeRoot = cfg.FallbackRuntimeRoot
	}
	if cfg.RuntimeRoot == "" && !underShim {
		root, err := defaultRuntimeRoot(ctx, runner)
		if err != nil {
			return nil, err
		}
		cfg.RuntimeRoot = root
	}
	if !strings.HasPrefix(cfg.RuntimeRoot, "/") {
		return nil, fmt.Errorf("runtime root %q must be an absolute path", cfg.RuntimeRoot)
	}
	if c, ok := plane.(control.Compat); ok {
		runner.Scanner = scannerPath(cfg)
		c.Runner = runner
		plane = c
	}
	bg, cancel := context.WithCancel(context.Background())
	setupCtx, abortAll := context.WithCancel(bg)
	return &Runtime{
		cfg: cfg, proc: proc, control: plane, runner: runner, log: log, underShim: underShim, baseEnv: baseEnv, info: info,
		bg: bg, cancelBg: cancel, setupCtx: setupCtx, abortAll: abortAll,
		live:  map[*Handle]struct{}{},
		terms: terminalSet{live: map[*Terminal]struct{}{}},
	}, nil
}

// DaemonInfo is what the sandbox's daemon said of itself when the runtime
// was built (one Hello, cached). On stock envd Extension is false, Version
// says so and Capabilities is ["compat"].
type DaemonInfo struct {
	Extension    bool
	Version      string
	Hostname     string
	Capabilities []string
	RuntimeRoot  string
}

// Known is what this runtime learnt of its daemon, for RuntimeConfig.Known
// of a later runtime of the same sandbox.
type Known struct {
	info        DaemonInfo
	baseEnv     []string
	underShim   bool
	runtimeRoot string
}

// Known is what the runtime learnt of its daemon when it was built.
func (r *Runtime) Known() *Known {
	return &Known{info: r.info, baseEnv: r.baseEnv, underShim: r.underShim, runtimeRoot: r.cfg.RuntimeRoot}
}

// Info is the daemon as it answered when the runtime was built.
func (r *Runtime) Info() DaemonInfo { return r.info }

// Hostname is the sandbox's hostname: what the daemon said in Hello, or,
// on stock envd (which says nothing), read from the sandbox's /proc.
func (r *Runtime) Hostname(ctx context.Context) (string, error) {
	if r.info.Hostname != "" || r.info.Extension {
		return r.info.Hostname, nil
	}
	b, err := r.control.ReadFile(ctx, "/proc/sys/kernel/hostname")
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// runtimeRoot is the root of the private state directories.
func (r *Runtime) runtimeRoot() string { return r.cfg.RuntimeRoot }

// baseEnvironment is the sandbox's environment as probed through the daemon
// (HOME from passwd), before the scrub. It is probed once and cached.
func (r *Runtime) baseEnvironment(ctx context.Context) ([]string, error) {
	r.envMu.Lock()
	defer r.envMu.Unlock()
	if r.baseEnv != nil {
		return r.baseEnv, nil
	}
	env, err := probeEnvironment(ctx, r.runner)
	if err != nil {
		return nil, err
	}
	r.baseEnv = env
	return env, nil
}

// childEnvironment applies the environment boundary to explicit entries:
// the scrubbed sandbox base, then the entries. Invalid entries are rejected
// before any probe.
func (r *Runtime) childEnvironment(ctx context.Context, explicit []EnvEntry) ([]string, error) {
	if err := ValidateEnv(explicit); err != nil {
		return nil, err
	}
	base, err := r.baseEnvironment(ctx)
	if err != nil {
		return nil, err
	}
	return ChildEnv(base, explicit)
}

// controlEnvironment is the Start environment for wrappers and control
// commands: blanks for every scrubbed ambient name (so they do not sit in
// the wrapper's /proc/<pid>/environ), and no startup file for bash or sh.
func (r *Runtime) controlEnvironment(ctx context.Context) (map[string]string, error) {
	base, err := r.baseEnvironment(ctx)
	if err != nil {
		return nil, err
	}
	env := map[string]string{"BASH_ENV": "", "ENV": ""}
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); ScrubbedName(name) {
			env[name] = ""
		}
	}
	return env, nil
}

// beginSetup registers a spawn in flight; it fails once disposal started.
func (r *Runtime) beginSetup() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.disposing {
		return ErrDisposing
	}
	r.setups.Add(1)
	return nil
}

func (r *Runtime) own(h *Handle) {
	r.mu.Lock()
	r.live[h] = struct{}{}
	r.mu.Unlock()
}

func (r *Runtime) release(h *Handle) {
	r.mu.Lock()
	delete(r.live, h)
	r.mu.Unlock()
}

// liveHandles is the number of handles the runtime still owns: those whose tree
// has not been proven gone.
func (r *Runtime) liveHandles() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.live)
}

// Dispose refuses new work, aborts spawns and terminal allocations in
// flight, then terminates and joins every owned process group (tree gone,
// outcome settled) and every owned terminal (session empty), all at once.
// Every failure is reported together; whatever failed stays owned, so
// Dispose can be called again.
func (r *Runtime) Dispose(ctx context.Context) error {
	r.mu.Lock()
	r.disposing = true
	r.mu.Unlock()
	r.abortAll()
	r.setups.Wait()

	var procErr, termErr error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); procErr = r.disposeHandles(ctx) }()
	go func() { defer wg.Done(); termErr = r.disposeTerminals(ctx) }()
	wg.Wait()
	r.jobs.Wait()
	err := errors.Join(procErr, termErr)
	if err == nil {
		r.cancelBg()
	}
	return err
}

// disposeHandles terminates and joins every owned process group.
func (r *Runtime) disposeHandles(ctx context.Context) error {
	r.mu.Lock()
	handles := make([]*Handle, 0, len(r.live))
	for h := range r.live {
		handles = append(handles, h)
	}
	r.mu.Unlock()

	errs := make([]error, len(handles))
	var wg sync.WaitGroup
	for i, h := range handles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h.Terminate()
			if _, err := h.WaitForExit(ctx); err != nil {
				errs[i] = fmt.Errorf("process group %d: %w", h.Pgid(), err)
				return
			}
			select {
			case <-h.Done():
			case <-ctx.Done():
				errs[i] = fmt.Errorf("process group %d: outcome not settled: %w", h.Pgid(), ctx.Err())
				return
			}
			r.release(h)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// NewRuntime builds a Runtime over an envd-compatible client. It calls
// Hello to discover sandtop's extension: when the daemon answers, the
// Supervisor is the control plane; on stock envd (Unimplemented) control
// commands run through process.Process/Start instead.
func NewRuntime(ctx context.Context, c *envd.Client, cfg RuntimeConfig) (*Runtime, error) {
	if c == nil {
		return nil, errors.New("runtime needs an envd client")
	}
	if cfg.Upload == nil {
		cfg.Upload = c.Upload
	}
	return newRuntime(ctx, c.Process, c.Supervisor, c.Filesystem(), cfg)
}

// jobSet counts background goroutines. Unlike sync.WaitGroup it allows new
// jobs while someone waits (a handle may settle during Dispose).
type jobSet struct {
	mu   sync.Mutex
	cond *sync.Cond
	n    int
}

func (j *jobSet) Add(n int) {
	j.mu.Lock()
	j.n += n
	j.mu.Unlock()
}

func (j *jobSet) Done() {
	j.mu.Lock()
	j.n--
	if j.cond != nil {
		j.cond.Broadcast()
	}
	j.mu.Unlock()
}

// Wait returns once no job is running.
func (j *jobSet) Wait() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.cond == nil {
		j.cond = sync.NewCond(&j.mu)
	}
	for j.n > 0 {
		j.cond.Wait()
	}
}
