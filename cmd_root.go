package main

import (
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globalFlags are accepted by every command: where the config lives and
// which sandbox to talk to.
type globalFlags struct {
	configPath string
	readOnly   bool
	target     targetFlags
}

func newRootCmd() *cobra.Command {
	g := &globalFlags{}
	tui := &tuiFlags{}
	root := &cobra.Command{
		Use:   "sandtop",
		Short: "Supervise the processes of sandboxes: a TUI and a CLI",
		Long: `sandtop lists the process groups and terminals of a sandbox, shows their
output, attaches to terminals, and sends signals or tears groups down.

With no command it opens the TUI. With no target flags the TUI holds the
embedded local sandbox and every target of the config file (the config's
default shown first); --target, --socket and --envd (each repeatable) and
--e2b (every E2B sandbox, running or paused, or --e2b=ID; looking never
resumes or extends one) name the sandboxes instead.
In the TUI, c or :ctx switches between them. The other commands work on
one sandbox. The local sandbox's daemon starts on first use and keeps
running, with every process it supervises, after sandtop exits.`,
		Args:          usageArgs(cobra.NoArgs),
		SilenceErrors: true,
		SilenceUsage:  true,
		Version:       versionString(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTUI(cmd.Context(), g, tui, cmd.Flags())
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usagef(err) })
	pf := root.PersistentFlags()
	pf.StringVar(&g.configPath, "config", "", "config file (default: see 'sandtop config path')")
	pf.BoolVar(&g.readOnly, "read-only", false, "refuse every action that changes the sandbox")
	g.target.register(pf)
	tui.register(root.Flags())
	root.AddCommand(
		newVersionCmd(),
		newConfigCmd(g),
		newDaemonCmd(g),
		newServeCmd(),
		newE2BCmd(g),
	)
	addSessionCommands(root, g)
	return root
}

// usageArgs turns cobra's argument-count errors into usage errors (exit 2).
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		return usagef(check(cmd, args))
	}
}

// tuiFlags are the TUI's own flags; they override the config file.
type tuiFlags struct {
	theme string
	mouse bool
}

func (t *tuiFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.theme, "theme", "", "colour theme (dark, light, high-contrast)")
	fs.BoolVar(&t.mouse, "mouse", false, "capture the mouse (wheel scrolling; disables the terminal's own selection)")
}

// flagSet reports whether the named flag was given on the command line,
// so flags override the config only when present.
func flagSet(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
