package uisource

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"sandtop/backend/seam"
	"sandtop/config"
	"sandtop/stuck"
	"sandtop/ui"
)

// Options configure the Source over a sandtop seam.
type Options struct {
	// Name and Target label the sandbox in the header.
	Name, Target string
	// Cwd is where :run and :term start programs, and where an agent's
	// .dsh-e2b state is looked for; empty means "/".
	Cwd string
	// Grace is the TERM→KILL grace recorded with spawned processes;
	// zero means 5 s.
	Grace time.Duration
	// Interval is the most often the process table is refreshed; zero
	// means one second. Without the extension the table is polled, never
	// more often than once a second.
	Interval time.Duration
	// Stuck are the rules that flag groups as stuck; nil means the
	// defaults.
	Stuck *stuck.Rules
}

// backendSource is the real Source: every read and change goes through the
// seam Runtime, the same calls the CLI makes. It never disposes the
// Runtime: quitting the TUI leaves every process running.
type backendSource struct {
	rt     *seam.Runtime
	opts   Options
	compat bool // no Supervisor: poll, no replay, no PTY sizes

	conn lossTracker

	mu      sync.Mutex
	leaders map[int]keptGroup // by leader pid, from the last snapshot

	// base ends every watch on Close; wg counts their goroutines.
	base   context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// New adapts a connected sandbox's runtime to the TUI. It does no I/O: the
// runtime already asked the daemon for its extension.
func New(rt *seam.Runtime, opts Options) (ui.Source, error) {
	if rt == nil {
		return nil, errors.New("ui: backend source needs a runtime")
	}
	if opts.Cwd == "" {
		opts.Cwd = "/"
	}
	if opts.Grace <= 0 {
		opts.Grace = config.DefaultGrace
	}
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	base, cancel := context.WithCancel(context.Background())
	return &backendSource{
		rt: rt, opts: opts, compat: !rt.Info().Extension,
		base: base, cancel: cancel,
	}, nil
}

// Close ends every watch and waits for their goroutines. Nothing in the
// sandbox is touched. (Not part of Source; the TUI's owner may call it.)
func (s *backendSource) Close() error {
	s.cancel()
	s.wg.Wait()
	return nil
}

// Info reports the daemon as it answered the runtime's Hello. Without the
// extension the header shows the capability "compat": polled table, no
// replay on attach, no PTY sizes.
func (s *backendSource) Info(ctx context.Context) (ui.SandboxInfo, error) {
	d := s.rt.Info()
	info := ui.SandboxInfo{Name: s.opts.Name, Target: s.opts.Target, Version: d.Version, Capabilities: d.Capabilities, Hostname: d.Hostname}
	if s.compat {
		if h, err := s.rt.Hostname(ctx); err == nil {
			info.Hostname = h
		}
		if info.Name == "" {
			info.Name = info.Hostname
		}
		return info, nil
	}
	if info.Name == "" {
		info.Name = d.Hostname
	}
	return info, nil
}

// Spawn starts argv through the seam (the shim, or the wrapper on stock
// envd) with its output kept in the sandbox, and lets go of the handle.
func (s *backendSource) Spawn(ctx context.Context, argv []string, cwd string) (int, error) {
	if cwd == "" {
		cwd = s.opts.Cwd
	}
	h, err := s.rt.Spawn(ctx, seam.SpawnSpec{
		Argv: argv, Cwd: cwd, Grace: s.opts.Grace,
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.KeptOutput(), Stderr: seam.KeptOutput()},
	})
	if err != nil {
		return 0, err
	}
	// The group outlives the TUI, and its output stays in the sandbox for
	// 'sandtop logs'; nothing in this process needs to follow it.
	h.Detach()
	return h.Pgid(), nil
}

func (s *backendSource) SpawnTerminal(ctx context.Context, argv []string, rows, cols int) (int, error) {
	t, err := s.rt.SpawnTerminal(ctx, seam.TerminalSpec{
		Argv: argv, Cwd: s.opts.Cwd, Env: map[string]string{"TERM": "xterm-256color"},
		Rows: rows, Cols: cols, Grace: s.opts.Grace,
	})
	if err != nil {
		return 0, err
	}
	// The TUI attaches through Attach when it shows the terminal; the
	// seam's own handle would keep a second stream and a buffer nobody
	// reads, so it lets go at once. The terminal runs on.
	t.Detach()
	return t.Pid(), nil
}

// Signal reaches the group and, on sandtop's daemon, its escapees, as ls
// lists them with it.
func (s *backendSource) Signal(ctx context.Context, pgid int, sig syscall.Signal) error {
	delivered, err := s.rt.Signal(ctx, pgid, sig)
	if err == nil && !delivered {
		return fmt.Errorf("pgid %d has no members left", pgid)
	}
	return err
}

func (s *backendSource) SignalForeground(ctx context.Context, termPid int, sig syscall.Signal) (int, error) {
	pgid, ok, err := s.rt.ForegroundGroup(ctx, termPid)
	if err != nil {
		return 0, err
	}
	if !ok || pgid <= 1 {
		return 0, fmt.Errorf("terminal %d has no foreground group", termPid)
	}
	return pgid, s.Signal(ctx, pgid, sig)
}

func (s *backendSource) Teardown(ctx context.Context, pgid int, grace time.Duration, progress func(ui.TeardownEvent)) error {
	if progress == nil {
		progress = func(ui.TeardownEvent) {} // a caller that only wants the result
	}
	return s.rt.TeardownGroup(ctx, pgid, grace, func(ev seam.TeardownEvent) {
		out := ui.TeardownEvent{PGID: ev.Pgid, Err: ev.Err}
		switch ev.Phase {
		case seam.PhaseTermSent:
			out.Phase = ui.TeardownTerm
		case seam.PhaseWaiting:
			out.Phase, out.Remaining = ui.TeardownWaiting, time.Until(ev.Deadline)
		case seam.PhaseKillSent:
			out.Phase = ui.TeardownKill
		case seam.PhaseEmpty:
			out.Phase = ui.TeardownEmpty
		default:
			out.Phase = ui.TeardownFailed
		}
		progress(out)
	})
}
