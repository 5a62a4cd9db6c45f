package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
)

// factory is what the commands that act on a sandbox take from outside
// themselves: the standard streams, the clock and their connection. Each such
// command fills an options struct from its flags and arguments and hands
// it, with the factory, to a run function; tests call the run functions
// in-process with buffers for the streams and a connection on an in-process
// daemon.
//
// Which sandbox a connection is on is decided in one place: resolveTarget
// (connection.go), from the target flags and the config (cmd_target.go).
// newFactory's Resolve is that and nothing else.
type factory struct {
	// In is a file, not a reader: attach reads keys from it (putting a
	// terminal in raw mode) and needs it; term takes its size when set.
	In     *os.File
	Out    io.Writer
	ErrOut io.Writer
	Now    func() time.Time

	// Resolve finds the one sandbox the command works on, without
	// dialling it (ls must not dial a paused E2B sandbox).
	Resolve func(ctx context.Context) (resolved, error)
	// ResolveNamed finds a sandbox by the name ls -A prints for it (the
	// SANDBOX of SANDBOX/PGID), without dialling it.
	ResolveNamed func(ctx context.Context, name string) (resolved, error)
	// Sandboxes lists every sandbox ls -A covers, without dialling any.
	Sandboxes func(ctx context.Context) ([]sandboxEntry, error)
	// Open dials a resolved sandbox.
	Open func(ctx context.Context, r resolved) (*connection, error)

	// bind makes a command's own target flags the ones Resolve reads;
	// completion calls it, since cobra runs no pre-run hook before
	// completing. Nil where the factory is not over flags (tests).
	bind func(*cobra.Command)
}

// newFactory is the binary's factory: the process's streams and clock,
// and the sandbox the global flags and the config name.
func newFactory(g *globalFlags) *factory {
	return &factory{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr, Now: time.Now,
		Resolve: func(ctx context.Context) (resolved, error) { return resolveTarget(ctx, g) },
		ResolveNamed: func(ctx context.Context, name string) (resolved, error) {
			return resolveNamedTarget(ctx, g, name)
		},
		Sandboxes: func(ctx context.Context) ([]sandboxEntry, error) { return allSandboxes(ctx, g) },
		Open:      func(ctx context.Context, r resolved) (*connection, error) { return r.open(ctx) },
		bind: func(cmd *cobra.Command) {
			g.bind(cmd)
			// cobra parses a completion's flags twice, so each value of a
			// repeatable flag is there twice.
			g.target.dedupe()
		},
	}
}

// Connection resolves the command's sandbox and connects to it.
func (f *factory) Connection(ctx context.Context) (*connection, error) {
	r, err := f.Resolve(ctx)
	if err != nil {
		return nil, err
	}
	return f.Open(ctx, r)
}

// ConnectionIn opens the sandbox named (as ls -A names it), or with no name
// the command's own.
func (f *factory) ConnectionIn(ctx context.Context, name string) (*connection, error) {
	if name == "" {
		return f.Connection(ctx)
	}
	if f.ResolveNamed == nil {
		return nil, usagef(fmt.Errorf("sandbox %s: naming a sandbox is not supported here", name))
	}
	r, err := f.ResolveNamed(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("sandbox %s: %w", name, err)
	}
	return f.Open(ctx, r)
}

// MutableConnectionIn is MutableConnection in the sandbox named.
func (f *factory) MutableConnectionIn(ctx context.Context, name, what string) (*connection, error) {
	s, err := f.ConnectionIn(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := s.mutable(what); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// MutableConnection opens the sandbox for a command that changes it (what
// says how, for the message), and refuses at once, closing the connection,
// when the target is read-only.
func (f *factory) MutableConnection(ctx context.Context, what string) (*connection, error) {
	s, err := f.Connection(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.mutable(what); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// StartConnection opens the mutable connection a start (run, term) needs,
// resolves its working directory and checks its program, so a mistake is
// one error before anything starts. The caller closes the connection.
func (f *factory) StartConnection(ctx context.Context, verb, what, cwdFlag, program string, env []seam.EnvEntry) (*connection, string, error) {
	s, dir, err := f.startConnection(ctx, what, cwdFlag)
	if err != nil {
		return nil, "", err
	}
	if err := checkProgram(ctx, s.Runtime, program, env); err != nil {
		s.Close()
		return nil, "", fmt.Errorf("%s: %w", verb, err)
	}
	return s, dir, nil
}

// startConnection is StartConnection without the check of the program, for a
// start whose spawn checks it (seam.SpawnSpec.CheckProgram).
func (f *factory) startConnection(ctx context.Context, what, cwdFlag string) (*connection, string, error) {
	s, err := f.MutableConnection(ctx, what)
	if err != nil {
		return nil, "", err
	}
	dir, err := s.spawnCwd(cwdFlag)
	if err != nil {
		s.Close()
		return nil, "", err
	}
	return s, dir, nil
}
