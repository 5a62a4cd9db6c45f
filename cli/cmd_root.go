package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// globalFlags are the flags every command shares: where the config lives,
// the debug log, and (on the commands that act on a sandbox) which sandbox
// to talk to.
type globalFlags struct {
	configPath string
	logFile    string
	// readOnly and target are the running command's own sandbox flags,
	// copied from sandbox by bind once its command line is parsed.
	readOnly bool
	target   targetFlags
	log      *slog.Logger // never nil once a command runs
	// sandbox holds each command's own flag state: a flag registered on
	// two commands must not share (and so lose) what it was given.
	sandbox map[*cobra.Command]*sandboxFlags
}

// sandboxFlags are the flags of one command that acts on a sandbox.
type sandboxFlags struct {
	readOnly bool
	target   targetFlags
}

// bind makes cmd's own sandbox flags the ones the run uses: those it
// registered, or its family's (e2b's subcommands share e2b's). The root
// calls it before any command runs, and completion before it lists.
func (g *globalFlags) bind(cmd *cobra.Command) {
	for c := cmd; c != nil; c = c.Parent() {
		if sf, ok := g.sandbox[c]; ok {
			g.readOnly, g.target = sf.readOnly, sf.target
			return
		}
	}
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
resumes or extends one) and --kube (the pods that run sandtop's daemon,
found and reached through the Kubernetes API server, with --namespace,
--selector, --kube-context) name the sandboxes instead.
In the TUI, c or :ctx switches between them. The other commands work on
one sandbox, except ls -A, which lists every one, and kill, signal and
logs, which take SANDBOX/PGID for a group elsewhere. A target flag a
command cannot honour is an error, never a quiet fall-back to the local
sandbox. The local sandbox's daemon starts on first use and keeps
running, with every process it supervises, after sandtop exits.`,
		Args:          unknownCommand,
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
	pf.StringVar(&g.logFile, "log-file", "", "write a debug log of what sandtop does here (also: $SANDTOP_DEBUG=1 logs to stderr)")
	tui.register(root.Flags())
	_ = root.RegisterFlagCompletionFunc("theme", themeCompletion)
	root.AddGroup(
		&cobra.Group{ID: groupWatch, Title: "See what runs:"},
		&cobra.Group{ID: groupAct, Title: "Start and stop work:"},
		&cobra.Group{ID: groupSetup, Title: "Set sandtop up:"},
	)
	root.AddCommand(
		inGroup(groupSetup, newVersionCmd(g)),
		inGroup(groupSetup, newConfigCmd(g)),
		inGroup(groupSetup, newDaemonCmd(g)),
		inGroup(groupSetup, newServeCmd()),
		inGroup(groupAct, newE2BCmd(g)),
		newEnvironmentHelp(),
	)
	root.SuggestionsMinimumDistance = 2
	addSandboxCommands(root, g)
	for _, c := range root.Commands() {
		if c.Flags().Lookup("theme") != nil {
			_ = c.RegisterFlagCompletionFunc("theme", themeCompletion)
		}
	}
	root.SetHelpCommandGroupID(groupSetup)
	root.SetCompletionCommandGroupID(groupSetup)
	root.InitDefaultCompletionCmd() // now, so refuseUnknownSubcommands sees it
	refuseUnknownSubcommands(root)
	// The commands that act on a sandbox, and the TUI, take the target
	// flags; the others (version, config, serve) have no use for them.
	for _, c := range append([]*cobra.Command{root}, root.Commands()...) {
		if c.GroupID == groupWatch || c.GroupID == groupAct || c == root {
			g.registerSandboxFlags(c)
		}
	}
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		g.bind(cmd)
		return g.startLog(cmd)
	}
	return root
}

// Command groups of --help, in the operator's words.
const (
	groupWatch = "watch"
	groupAct   = "act"
	groupSetup = "setup"
)

func inGroup(id string, c *cobra.Command) *cobra.Command {
	c.GroupID = id
	return c
}

// registerSandboxFlags adds the flags of a command that acts on a sandbox:
// which one (with completion of configured names), and read-only.
func (g *globalFlags) registerSandboxFlags(c *cobra.Command) {
	fs := c.Flags()
	if c.HasParent() && c.HasSubCommands() {
		fs = c.PersistentFlags() // a family such as e2b: its subcommands act
	}
	sf := &sandboxFlags{}
	if g.sandbox == nil {
		g.sandbox = map[*cobra.Command]*sandboxFlags{}
	}
	g.sandbox[c] = sf
	fs.BoolVar(&sf.readOnly, "read-only", false, "refuse every action that changes the sandbox")
	sf.target.register(fs)
	_ = c.RegisterFlagCompletionFunc("target", targetCompletion(g))
}

// unknownCommand refuses arguments to plain sandtop or a command family,
// suggesting the command that was probably meant ("sandtop lss": did you
// mean ls?).
func unknownCommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q (see '%s --help')", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg = fmt.Sprintf("unknown command %q for %q; did you mean %s?", args[0], cmd.CommandPath(), strings.Join(s, " or "))
	}
	return usagef(errors.New(msg))
}

// refuseUnknownSubcommands makes every command family below root (daemon,
// config, e2b, completion) refuse a word that is none of its commands as a
// usage error (exit 2), as kubectl does; cobra would print the family's
// help and exit 0, so a script's typo would pass as success. Alone, the
// family still prints its help.
func refuseUnknownSubcommands(root *cobra.Command) {
	for _, c := range root.Commands() {
		if !c.HasSubCommands() {
			continue
		}
		if !c.Runnable() {
			c.Args = unknownCommand
			c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
		}
		refuseUnknownSubcommands(c)
	}
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
	// keepTermSize leaves attached terminals at the size the TUI gave them.
	keepTermSize bool
	// printContexts (hidden --print-contexts) prints the sandboxes the TUI
	// would open, as JSON, instead of opening it: how the binary's tests
	// check which sandboxes the target flags chose without a terminal.
	printContexts bool
}

func (t *tuiFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&t.theme, "theme", "", "colour theme (dark, light, high-contrast)")
	fs.BoolVar(&t.mouse, "mouse", false, "capture the mouse (wheel scrolling; disables the terminal's own selection)")
	fs.BoolVar(&t.keepTermSize, "keep-term-size", false, "leave a terminal at the TUI's size after detaching (by default it gets its previous size back)")
	fs.BoolVar(&t.printContexts, "print-contexts", false, "print the sandboxes the TUI would open, as JSON, and exit")
	_ = fs.MarkHidden("print-contexts")
}

// flagSet reports whether the named flag was given on the command line,
// so flags override the config only when present.
func flagSet(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}
