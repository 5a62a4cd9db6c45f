package terminal

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

// runnerShell runs the terminal runner. Our Start takes argv, so the runner
// is the PTY's first process; no login shell is typed into.
const runnerShell = "/bin/bash"

// ValidateSpec checks everything that can be checked before any
// remote work, and names the first thing that is wrong.
func ValidateSpec(spec Spec) error {
	if len(spec.Argv) == 0 || spec.Argv[0] == "" {
		return errors.New("terminal argv needs a non-empty program")
	}
	for i, a := range spec.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("terminal argv must not contain NUL bytes (argv[%d])", i)
		}
	}
	if spec.Cwd == "" {
		return errors.New("terminal cwd is empty")
	}
	if err := checkTerminalSize(spec.Rows, spec.Cols); err != nil {
		return err
	}
	if err := control.ValidateTag(spec.Tag); err != nil {
		return fmt.Errorf("terminal %w", err)
	}
	if err := control.ValidateGrace("terminal grace", spec.Grace); err != nil {
		return err
	}
	for name, value := range spec.Env {
		if name == "" || strings.ContainsAny(name, "=\x00") || strings.IndexByte(value, 0) >= 0 {
			return fmt.Errorf("terminal environment entry %q: names must be non-empty without = or NUL, values NUL-free", name)
		}
	}
	return nil
}

// Spawn allocates a PTY at the requested size running the runner,
// which installs argv and env from private files and prints the output
// boundary before it execs the program. ctx bounds the allocation only.
func (rt *Service) Spawn(ctx context.Context, spec Spec) (*Terminal, error) {
	if err := ValidateSpec(spec); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("terminal allocation cancelled: %w", context.Cause(ctx))
	}
	env, err := rt.ChildEnv(ctx, spec.Env)
	if err != nil {
		return nil, err
	}
	marker, err := wrapper.NewBoundary()
	if err != nil {
		return nil, err
	}
	files, err := wrapper.NewTerminalFiles(spec.Argv, env, marker)
	if err != nil {
		return nil, err
	}
	id, err := newTerminalID()
	if err != nil {
		return nil, err
	}
	dir := rt.stateDir(id)
	if err := rt.writeState(ctx, dir, files.Named()); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("terminal allocation cancelled: %w", err)
		}
		return nil, rt.rollbackState(err, id)
	}
	if err := ctx.Err(); err != nil {
		return nil, rt.rollbackState(fmt.Errorf("terminal allocation cancelled: %w", context.Cause(ctx)), id)
	}

	// The stream outlives ctx: once the PTY exists the handle owns it, and
	// cancelling the allocation must go through rollback, never a dropped
	// stream whose pid we would not know.
	streamCtx, stop := context.WithCancel(context.Background())
	stdin := false
	tag := terminalTag(id, spec.Grace, spec.Tag)
	cwd := spec.Cwd
	stream, err := rt.Process.Start(streamCtx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{
			Cmd:  runnerShell,
			Args: []string{"--noprofile", "--norc", path.Join(dir, wrapper.TerminalRunnerFile), dir},
			Envs: rt.ControlEnv,
			Cwd:  &cwd,
		},
		Pty:   ptySize(spec.Rows, spec.Cols),
		Tag:   &tag,
		Stdin: &stdin,
	}))
	if err != nil {
		stop()
		return nil, rt.rollbackState(fmt.Errorf("start terminal: %w", err), id)
	}
	s := startStream{stream}
	pid, err := firstPid(s)
	if err != nil {
		s.close()
		stop()
		return nil, rt.rollbackState(fmt.Errorf("start terminal: %w", err), id)
	}
	t := newTerminal(rt, pid, id, spec.Grace, stop)
	filter := newBoundaryFilter(marker)
	published := make(chan struct{})
	go t.pump(s, filter, filter.passedBoundary, published)

	select {
	case <-published:
		// Both may be ready by now, and select picks either: an allocation
		// cancelled meanwhile (disposal began) is rolled back all the same.
		if ctx.Err() != nil {
			return nil, t.rollback(fmt.Errorf("terminal allocation cancelled: %w", context.Cause(ctx)))
		}
		return t, nil
	case <-t.done:
		_, terr := t.Outcome()
		cause := errors.New("terminal exited before publishing its output boundary")
		if terr != nil {
			cause = fmt.Errorf("%w: %w", cause, terr)
		}
		return nil, t.rollback(cause)
	case <-ctx.Done():
		return nil, t.rollback(fmt.Errorf("terminal allocation cancelled: %w", context.Cause(ctx)))
	}
}

// firstPid reads the start event, which carries the PTY process's pid.
func firstPid(s eventStream) (int, error) {
	for {
		ev, err := s.next()
		if err != nil || ev == nil {
			if err == nil {
				err = errors.New("stream ended before the start event")
			}
			return 0, err
		}
		if st := ev.GetStart(); st != nil {
			if st.GetPid() <= 1 {
				return 0, fmt.Errorf("invalid terminal pid %d", st.GetPid())
			}
			return int(st.GetPid()), nil
		}
		if ev.GetEnd() != nil {
			return 0, errors.New("process ended before its start event")
		}
	}
}

// rollback tears down a half-made terminal and returns cause, joined with
// the cleanup failure if cleanup could not prove the session empty.
func (t *Terminal) rollback(cause error) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*t.grace+10*time.Second)
	defer cancel()
	if err := t.Terminate(ctx); err != nil {
		return fmt.Errorf("%w (and rollback did not reach quiescence: %v)", cause, err)
	}
	return cause
}

// rollbackState removes a state directory written before the PTY existed.
func (rt *Service) rollbackState(cause error, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), exitStatusTimeout)
	defer cancel()
	if err := rt.removeState(ctx, id); err != nil {
		return fmt.Errorf("%w (and private state cleanup failed: %v)", cause, err)
	}
	return cause
}
