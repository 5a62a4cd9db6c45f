package seam

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/wrapper"
)

// Spawn starts spec.Argv through the wrapper and returns once the wrapper
// has published the process group, so Pid is real. ctx bounds only the
// setup: once Spawn returns, the handle owns its own lifetime. Bad specs
// are rejected before anything starts in the sandbox.
func (r *Runtime) Spawn(ctx context.Context, spec SpawnSpec) (*Handle, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("aborted before spawn: %w", context.Cause(ctx))
	}
	if err := r.beginSetup(); err != nil {
		return nil, err
	}
	defer r.setups.Done()
	// Disposal aborts setups that are still running.
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	unlink := context.AfterFunc(r.setupCtx, func() { stop(ErrDisposing) })
	defer unlink()

	// startChecks: the daemon's Start refuses a missing program itself,
	// which spares a Resolve round trip.
	startChecks := spec.CheckProgram && r.underShim && slices.Contains(r.info.Capabilities, capCheckProgram)
	if spec.CheckProgram && !startChecks {
		if err := r.checkProgram(ctx, spec.Argv[0], spec.Env); err != nil {
			return nil, err
		}
	}
	if startChecks && !strings.HasPrefix(spec.Argv[0], "/") && strings.Contains(spec.Argv[0], "/") {
		return nil, errRelativeCommand(spec.Argv[0])
	}

	env, err := r.childEnvironment(ctx, spec.Env)
	if err != nil {
		return nil, err
	}
	h, assumed, err := r.spawnAttempt(ctx, spec, env, startChecks)
	if err != nil && assumed {
		// The supervisor was taken to be installed, and the spawn failed:
		// install it (or decide on the wrapper) and try once more. Nothing
		// was published, so nothing ran.
		if _, _, cerr := r.confirmSupervisor(ctx); cerr != nil {
			return nil, fmt.Errorf("%w (and %w)", err, cerr)
		}
		h, _, err = r.spawnAttempt(ctx, spec, env, startChecks)
	}
	return h, err
}

// spawnAttempt starts one group; assumed says it ran under a supervisor
// not yet proven installed.
func (r *Runtime) spawnAttempt(ctx context.Context, spec SpawnSpec, env []string, startChecks bool) (h *Handle, assumed bool, err error) {
	id, err := newProcessID()
	if err != nil {
		return nil, assumed, err
	}
	h = r.newHandle(id, spec)
	var startReq *connect.Request[process.StartRequest]
	var payload []byte
	if r.underShim {
		startReq, payload = r.shimStart(h, spec, env)
		if startChecks {
			startReq.Header().Set(checkProgramHeader, "1")
		}
	} else {
		controlEnv, err := r.controlEnvironment(ctx)
		if err != nil {
			return nil, assumed, err
		}
		var bin string
		bin, assumed, err = r.supervisor(ctx)
		if err != nil {
			return nil, assumed, err
		}
		if bin != "" {
			startReq, payload, err = r.supervisedStart(h, bin, spec, env, controlEnv)
		} else {
			startReq, payload, err = r.wrapperStart(h, spec, env, controlEnv)
		}
		if err != nil {
			return nil, assumed, err
		}
	}
	if spec.Stdio.Stdin.Data != nil {
		payload = append(payload, *spec.Stdio.Stdin.Data...)
	}

	streamCtx, stopStream := context.WithCancel(r.bg)
	h.stopStream = stopStream
	h.inherit = newInheritQueue(streamCtx.Done())
	stream, err := r.proc.Start(streamCtx, startReq)
	if err != nil {
		stopStream()
		return nil, assumed, fmt.Errorf("spawn failed: %w", err)
	}
	published := make(chan publication, 1)
	go h.pump(stream, payload, !spec.Stdio.Stdin.Pipe && (!r.underShim || !spec.Stdio.Stdin.Ignore), published)

	select {
	case p := <-published:
		if p.err != nil {
			if startChecks && programMissing(h.streamErr) {
				// The daemon refused before it created or started
				// anything, so there is nothing to roll back (on a
				// client without the filesystem service, removing the
				// state directory would start rm).
				h.stopStream()
				<-h.streamDone
				return nil, assumed, errProgramMissing(spec.Argv[0])
			}
			return nil, assumed, r.rollbackSpawn(h, p.err)
		}
		h.pgid = p.pgid
	case <-ctx.Done():
		return nil, false, r.rollbackSpawn(h, fmt.Errorf("aborted during spawn: %w", context.Cause(ctx)))
	}
	if assumed {
		r.supervisorProven()
	}
	r.own(h)
	go h.monitor()
	return h, false, nil
}

// wrapperStart is the Start of the bash wrapper (stock envd): the control
// environment for bash, and the child environment framed at the head of
// stdin.
func (r *Runtime) wrapperStart(h *Handle, spec SpawnSpec, env []string, controlEnv map[string]string) (*connect.Request[process.StartRequest], []byte, error) {
	payload, err := wrapper.EnvironmentPayload(env)
	if err != nil {
		return nil, nil, err
	}
	inv := wrapper.Invocation{
		StateDir:    h.stateDir,
		Argv:        spec.Argv,
		Stdin:       wrapper.StdinIgnore,
		StdoutSpill: spillCap(spec.Stdio.Stdout),
		StderrSpill: spillCap(spec.Stdio.Stderr),
		Tag:         spec.Tag,
	}
	if !spec.Stdio.Stdin.Ignore {
		inv.Stdin = wrapper.StdinForward
	}
	cmd, args, err := inv.Command(r.cfg.Bash)
	if err != nil {
		return nil, nil, err
	}
	wantStdin := true
	cwd := spec.Cwd
	req := &process.StartRequest{
		Process: &process.ProcessConfig{Cmd: cmd, Args: args, Envs: controlEnv, Cwd: &cwd},
		Stdin:   &wantStdin,
	}
	if spec.Tag != "" {
		req.Tag = &spec.Tag
	}
	return connect.NewRequest(req), payload, nil
}

// shimStart is the plain spec for sandtop's daemon, whose shim runs the
// program itself: its argv, its whole environment, its stdin mode, and the
// spill caps in a header.
func (r *Runtime) shimStart(h *Handle, spec SpawnSpec, env []string) (*connect.Request[process.StartRequest], []byte) {
	envs := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		envs[k] = v
	}
	wantStdin := !spec.Stdio.Stdin.Ignore
	cwd := spec.Cwd
	req := &process.StartRequest{
		Process: &process.ProcessConfig{Cmd: spec.Argv[0], Args: spec.Argv[1:], Envs: envs, Cwd: &cwd},
		Stdin:   &wantStdin,
	}
	if spec.Tag != "" {
		req.Tag = &spec.Tag
	}
	startReq := connect.NewRequest(req)
	startReq.Header().Set(sessionDirHeader, h.stateDir)
	startReq.Header().Set(spillHeader, fmt.Sprintf("%d %d", spillCap(spec.Stdio.Stdout), spillCap(spec.Stdio.Stderr)))
	h.underShim = true
	return startReq, nil
}

// publication is the pump's answer to Spawn: the group, or why there is none.
type publication struct {
	pgid int
	err  error
}

func (r *Runtime) newHandle(id string, spec SpawnSpec) *Handle {
	h := &Handle{
		rt:         r,
		id:         id,
		stateDir:   wrapper.StateDir(r.cfg.RuntimeRoot, id),
		grace:      spec.Grace,
		modes:      spec.Stdio,
		streamDone: make(chan struct{}),
		done:       make(chan struct{}),
	}
	if spec.Stdio.Stdin.Pipe {
		h.Stdin = &stdinWriter{h: h}
	}
	if spec.Stdio.Stdout.Pipe {
		h.outPipe = newOutputPipe(r.cfg.PipeWindow)
		h.Stdout = h.outPipe
	}
	if spec.Stdio.Stderr.Pipe {
		h.errPipe = newOutputPipe(r.cfg.PipeWindow)
		h.Stderr = h.errPipe
	}
	if c := spec.Stdio.Stdout.Collect; c != nil {
		h.Collected.Stdout = newOutputReader(c.MaxBytes, h.stateDir+"/"+wrapper.StdoutSpillFile, spillMax(c))
	}
	if c := spec.Stdio.Stderr.Collect; c != nil {
		h.Collected.Stderr = newOutputReader(c.MaxBytes, h.stateDir+"/"+wrapper.StderrSpillFile, spillMax(c))
	}
	return h
}

// rollbackSpawn undoes a spawn that never published a usable group: it
// kills whatever the wrapper managed to start and removes the private
// state. A failed rollback is reported with the original error.
func (r *Runtime) rollbackSpawn(h *Handle, cause error) error {
	ctx := r.bg
	var errs []error
	if !h.streamEnded() {
		// The wrapper may have published its group before we gave up.
		if b, err := r.control.ReadFile(ctx, h.stateDir+"/"+wrapper.PidFile); err == nil {
			if pgid, perr := wrapper.ParsePgid(string(b)); perr == nil {
				h.pgid = pgid
				if err := r.teardown(ctx, pgid, h.grace, h.tearHooks(), nil); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if pid := h.StartPid(); pid > 0 && !h.streamEnded() {
			_, _ = r.proc.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{Process: h.selector(), Signal: process.Signal_SIGNAL_SIGKILL}))
		}
	}
	h.stopStream()
	<-h.streamDone
	if err := r.control.Remove(ctx, h.stateDir); err != nil && !r.sandboxGone(err) {
		errs = append(errs, fmt.Errorf("private state cleanup failed: %w", err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w (and rollback failed: %w)", cause, errors.Join(errs...))
	}
	return cause
}

func spillCap(m OutputMode) int64 {
	if m.Collect != nil && m.Collect.Spill != nil {
		return m.Collect.Spill.MaxBytes
	}
	return wrapper.NoSpill
}

func spillMax(c *Collect) int64 {
	if c.Spill == nil {
		return 0
	}
	return c.Spill.MaxBytes
}

// The shim extension of Start (see the daemon's SessionDirHeader): the
// daemon creates the state directory and runs the program under its
// per-group supervisor, which publishes the group before the start event.
const (
	capShim          = "shim"
	sessionDirHeader = "Sandtop-Session-Dir"
	spillHeader      = "Sandtop-Spill"
)

// The daemon's check of the program within a shim Start (its
// CheckProgramHeader): a missing program fails the Start with CodeNotFound
// and the header in the error's metadata.
const (
	capCheckProgram    = "check-program"
	checkProgramHeader = "Sandtop-Check-Program"
)

// programMissing says whether a Start failed on the daemon's check of the
// program.
func programMissing(err error) bool {
	var ce *connect.Error
	return errors.As(err, &ce) && ce.Code() == connect.CodeNotFound && ce.Meta().Get(checkProgramHeader) != ""
}

// checkProgram refuses a program ResolveExecutable finds missing; a
// command -v answer that is no path (a shell builtin such as true, which
// env still finds on PATH) does not count.
func (r *Runtime) checkProgram(ctx context.Context, program string, env []EnvEntry) error {
	_, err := r.ResolveExecutable(ctx, program, env)
	switch {
	case err == nil, errors.Is(err, ErrNoFile):
		return nil
	case errors.Is(err, ErrNotExecutable), errors.Is(err, ErrRelativeCommand):
		return err
	}
	return fmt.Errorf("check %s: %w", program, err)
}

// newProcessID is a random state-directory name, like the seed's UUIDs.
func newProcessID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random process id: %w", err)
	}
	s := hex.EncodeToString(b[:])
	return s[:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:], nil
}
