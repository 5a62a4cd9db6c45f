package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
)

// runOptions is what "sandtop run" was asked for.
type runOptions struct {
	argv []string
	tag  string
	cwd  string   // --cwd as given
	env  []string // --env NAME=VALUE, unparsed
	wait bool
}

func newRunCmd(f *factory) *cobra.Command {
	var opts runOptions
	c := &cobra.Command{
		Use:   "run [--tag T] [--cwd D] [--env K=V]... [--wait] -- ARGV...",
		Short: "Start a process group in the sandbox and print its pid and pgid",
		Long: `Starts ARGV (never through a shell; pass "bash -c ..." yourself) as a new
process group and session in the sandbox, and prints its pid and pgid. The
process keeps running after sandtop exits; 'sandtop logs PID' shows its
output.

With --wait, the output streams here and sandtop exits with the program's
exit code (128+N when signal N ended it). Ctrl-C then stops waiting but
leaves the program running.`,
		Example: `  sandtop run -- make test
  sandtop run --tag build --env GOFLAGS=-race --cwd /work -- go build ./...
  sandtop run --wait -- bash -c 'echo hi; exit 3'; echo $?   # prints hi, then 3`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.argv = argv
			return runRun(cmd.Context(), f, opts)
		},
	}
	fs := c.Flags()
	fs.StringVar(&opts.tag, "tag", "", "label shown by 'ls' (kept in the sandbox)")
	fs.StringVar(&opts.cwd, "cwd", "", "working directory (default: here on the local sandbox, the sandbox's default elsewhere)")
	stringArrayVarP(fs, &opts.env, "env", "e", "NAME=VALUE added to the sandbox's scrubbed environment (repeatable)")
	fs.BoolVarP(&opts.wait, "wait", "w", false, "stream the output and exit with the program's exit code")
	return c
}

// runRun starts opts.argv as a new group; with wait it streams the output
// and returns the program's outcome as an exit code.
func runRun(ctx context.Context, f *factory, opts runOptions) error {
	if len(opts.argv) == 0 {
		return usagef(errors.New("run needs a program to start"))
	}
	entries, err := parseEnvFlags(opts.env)
	if err != nil {
		return err
	}
	if err := seam.ValidateTag(opts.tag); err != nil {
		return usagef(fmt.Errorf("--tag: %w", err))
	}
	argv := opts.argv
	// The spawn checks the program (CheckProgram): on sandtop's daemon
	// within the Start, which saves a round trip before it.
	s, dir, err := f.startConnection(ctx, "start a process", opts.cwd)
	if err != nil {
		return err
	}
	defer s.Close()
	spec := seam.SpawnSpec{Argv: argv, Cwd: dir, Grace: s.grace(), Env: entries, Tag: opts.tag,
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(),
			Stdout: seam.KeptOutput(), Stderr: seam.KeptOutput()},
		CheckProgram: true}
	if opts.wait {
		spec.Stdio.Stdout, spec.Stdio.Stderr = seam.OutputPipe(), seam.OutputPipe()
	}
	h, err := s.Runtime.Spawn(ctx, spec)
	if errors.Is(err, seam.ErrNotExecutable) || errors.Is(err, seam.ErrRelativeCommand) {
		return fmt.Errorf("run: %w", err) // the error names the program
	}
	if err != nil {
		return fmt.Errorf("run %s: %w", argv[0], err)
	}
	if why := s.Runtime.SupervisorFallback(); why != "" {
		fmt.Fprintf(f.ErrOut, "sandtop: the bash wrapper runs this group (eight processes instead of two): %s\n", why)
	}
	if !opts.wait {
		// The group runs on; its output stays in the sandbox for logs.
		h.Detach()
		fmt.Fprintf(f.Out, "pid %d pgid %d\n", h.Pid(), h.Pgid())
		return nil
	}
	fmt.Fprintf(f.ErrOut, "[sandtop] pid %d pgid %d\n", h.Pid(), h.Pgid())
	return waitForHandle(ctx, f, h)
}

// parseEnvFlags turns --env NAME=VALUE flags into seam entries, rejecting
// what the seam would: empty names, names with '=' or NUL, values with NUL.
func parseEnvFlags(flags []string) ([]seam.EnvEntry, error) {
	var out []seam.EnvEntry
	for _, kv := range flags {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usagef(fmt.Errorf("--env \"%s\": want NAME=VALUE", printable(kv)))
		}
		out = append(out, seam.SetEnv(name, value))
	}
	if err := seam.ValidateEnv(out); err != nil {
		return nil, usagef(fmt.Errorf("--env: %w", err))
	}
	return out, nil
}

// printable quotes control bytes so an error stays one readable line.
func printable(s string) string {
	q := fmt.Sprintf("%q", s)
	return q[1 : len(q)-1]
}

// waitForHandle copies the program's output here until it exits, and
// turns its outcome into sandtop's exit code.
func waitForHandle(ctx context.Context, f *factory, h *seam.Handle) error {
	copied := make(chan struct{}, 2)
	go func() { copyQuiet(f.Out, h.Stdout); copied <- struct{}{} }()
	go func() { copyQuiet(f.ErrOut, h.Stderr); copied <- struct{}{} }()
	select {
	case <-h.Done():
	case <-ctx.Done():
		fmt.Fprintf(f.ErrOut, "\n[sandtop] stopped waiting; pid %d keeps running (sandtop kill %d ends it)\n", h.Pid(), h.Pgid())
		return exitCodeError{code: exitInterrupted}
	}
	<-copied
	<-copied
	out, err := h.Outcome()
	if err != nil {
		return fmt.Errorf("pid %d: %w", h.Pid(), err)
	}
	return outcomeExit(out)
}

// outcomeExit maps an outcome to an exit code the way a shell does.
func outcomeExit(o seam.Outcome) error {
	switch {
	case o.ExitCode != nil:
		if *o.ExitCode == 0 {
			return nil
		}
		return exitCodeError{code: *o.ExitCode & 0xff}
	case o.Signal != "":
		if n, ok := signalNumber(o.Signal); ok {
			return exitCodeError{code: 128 + n}
		}
		return exitCodeError{code: exitError, err: fmt.Errorf("ended by %s", o.Signal)}
	}
	return errors.New("the program's outcome is unknown")
}
