package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sandtop/backend/seam"
)

// termOptions is what "sandtop term" was asked for.
type termOptions struct {
	argv   []string // empty: bash
	cwd    string   // --cwd as given
	env    []string // --env NAME=VALUE, unparsed
	attach bool
	tag    string
}

func newTermCmd(f *factory) *cobra.Command {
	var opts termOptions
	c := &cobra.Command{
		Use:   "term [--attach] [-- ARGV...]",
		Short: "Start a terminal (a program on a PTY) in the sandbox and print its pid",
		Long: `Starts ARGV (default: bash) on a new PTY sized like this terminal (80x24
when there is none) and prints its pid. It keeps running after sandtop
exits; 'sandtop attach PID' takes it over, and the TUI shows it live.`,
		Example: `  sandtop term
  sandtop term --attach -- htop
  sandtop term -- python3 -i`,
		RunE: func(cmd *cobra.Command, argv []string) error {
			opts.argv = argv
			return runTerm(cmd.Context(), f, opts)
		},
	}
	fs := c.Flags()
	fs.StringVar(&opts.cwd, "cwd", "", "working directory (default: here on the local sandbox)")
	stringArrayVarP(fs, &opts.env, "env", "e", "NAME=VALUE for the program's environment (repeatable)")
	fs.BoolVarP(&opts.attach, "attach", "a", false, "attach to it right away")
	fs.StringVar(&opts.tag, "tag", "", "label shown by 'ls' (kept in the sandbox)")
	return c
}

// runTerm starts a terminal sized like f.In (80x24 when that is no
// terminal) and prints its pid, or attaches to it.
func runTerm(ctx context.Context, f *factory, opts termOptions) error {
	argv := opts.argv
	if len(argv) == 0 {
		argv = []string{"bash"}
	}
	entries, err := parseEnvFlags(opts.env)
	if err != nil {
		return err
	}
	envMap := map[string]string{}
	for _, e := range entries {
		envMap[e.Name] = e.Value
	}
	s, dir, err := f.StartConnection(ctx, "term", "start a terminal", opts.cwd, argv[0], entries)
	if err != nil {
		return err
	}
	defer s.Close()
	rows, cols := 24, 80
	if f.In != nil {
		if c, r, err := term.GetSize(int(f.In.Fd())); err == nil && r > 0 && c > 0 {
			rows, cols = r, c
		}
	}
	t, err := s.Runtime.SpawnTerminal(ctx, seam.TerminalSpec{Argv: argv, Cwd: dir, Env: envMap,
		Rows: rows, Cols: cols, Grace: s.grace(), Tag: opts.tag})
	if err != nil {
		return fmt.Errorf("term %s: %w", strings.Join(argv, " "), err)
	}
	if !opts.attach {
		fmt.Fprintf(f.Out, "terminal pid %d\n", t.Pid())
		return nil
	}
	return attachTo(ctx, f, s, t)
}
