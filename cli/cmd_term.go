package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"sandtop/backend"
)

func newTermCmd(g *globalFlags) *cobra.Command {
	var (
		cwdFlag string
		envs    []string
		attach  bool
		tag     string
	)
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
			if len(argv) == 0 {
				argv = []string{"bash"}
			}
			entries, err := parseEnvFlags(envs)
			if err != nil {
				return err
			}
			envMap := map[string]string{}
			for _, e := range entries {
				envMap[e.Name] = e.Value
			}
			s, dir, err := openToStart(cmd.Context(), g, "term", "start a terminal", cwdFlag, argv[0], entries)
			if err != nil {
				return err
			}
			defer s.Close()
			rows, cols := 24, 80
			if c, r, err := term.GetSize(int(os.Stdin.Fd())); err == nil && r > 0 && c > 0 {
				rows, cols = r, c
			}
			t, err := s.Runtime.SpawnTerminal(cmd.Context(), backend.TerminalSpec{Argv: argv, Cwd: dir, Env: envMap,
				Rows: rows, Cols: cols, GraceMs: int(s.graceMs()), Tag: tag})
			if err != nil {
				return fmt.Errorf("term %s: %w", strings.Join(argv, " "), err)
			}
			if !attach {
				fmt.Fprintf(cmd.OutOrStdout(), "terminal pid %d\n", t.Pid())
				return nil
			}
			return runAttach(cmd, s, t)
		},
	}
	f := c.Flags()
	f.StringVar(&cwdFlag, "cwd", "", "working directory (default: here on the local sandbox)")
	f.StringArrayVarP(&envs, "env", "e", nil, "NAME=VALUE for the program's environment (repeatable)")
	f.BoolVarP(&attach, "attach", "a", false, "attach to it right away")
	f.StringVar(&tag, "tag", "", "label shown by 'ls' (kept in the sandbox)")
	return c
}
