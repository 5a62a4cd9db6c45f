package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"sandtop/backend/local"
	"sandtop/config"
	"sandtop/themes"
	"sandtop/ui"
)

// runTUI opens the TUI on the sandboxes the flags name (with none: the
// local sandbox and every configured target, the config's default shown
// first). Flags override the config.
func runTUI(ctx context.Context, g *globalFlags, tf *tuiFlags, fs *pflag.FlagSet) error {
	// The TUI's heap is small (tens of MiB) and churns with every frame
	// and every fleet summary: collecting at 4x the live heap rather than
	// 2x halves the collector's share of an idle fleet's CPU, for a few
	// MiB more.
	debug.SetGCPercent(300)
	cfg, err := g.loadConfig()
	if err != nil {
		return err
	}
	sels, err := g.target.resolveAll(cfg)
	if err != nil {
		return err
	}
	initial := 0
	if len(sels) == 0 {
		if sels, initial, err = allConfigured(cfg); err != nil {
			return err
		}
		for i := range sels {
			if err := g.target.applyLayout(&sels[i]); err != nil {
				return err
			}
		}
	}
	opener := &tuiOpener{cfg: cfg, log: g.logger()}
	defer opener.closeAll()
	specs, initial := opener.specs(ctx, sels, initial)
	if tf.printContexts {
		return printContexts(os.Stdout, specs, initial)
	}
	// One sandbox that cannot even be resolved is an error, as in the CLI;
	// with several, the picker shows which one failed and why.
	if len(specs) == 1 && specs[0].Err != nil {
		return specs[0].Err
	}
	if len(specs) == 0 {
		return errors.New("no sandbox to show: the E2B team has no sandbox (or none matches --e2b-metadata)")
	}
	opts, err := tuiOptions(cfg, g, tf, fs)
	if err != nil {
		return err
	}
	opts.Sandboxes, opts.Initial = specs, initial
	opts.Arrivals = opener.announced()
	opts.Logger = g.logger()
	opts.Warnings = warningsSoFar()
	// Saves go under the state directory, never into the working directory.
	if p, err := local.DefaultPaths(); err == nil {
		opts.ExportDir = filepath.Join(p.StateDir, "exports")
	}
	if os.Getenv("TMUX") != "" {
		opts.Tmux = ui.TmuxBuffer
	}
	// The TUI needs a terminal; say so plainly instead of a garbled screen.
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return errors.New("the TUI needs a terminal on stdin and stdout; use the CLI (sandtop ls, sandtop --help) from scripts")
	}
	return ui.Run(ctx, opts)
}

// tuiOptions merges defaults, the config file and the flags.
func tuiOptions(cfg config.Config, g *globalFlags, tf *tuiFlags, fs *pflag.FlagSet) (ui.Options, error) {
	if flagSet(fs, "theme") {
		if _, err := themes.LoadFrom(themes.UserDir(os.Getenv), tf.theme); err != nil {
			return ui.Options{}, usagef(fmt.Errorf("--theme: %w", err))
		}
		cfg.Theme = tf.theme
	}
	th, err := checkTUIConfig(cfg, os.Getenv)
	if err != nil {
		return ui.Options{}, err
	}
	return ui.Options{
		Theme:            th,
		ReadOnly:         g.readOnly,
		Mouse:            cfg.Mouse || tf.mouse,
		KeepTerminalSize: tf.keepTermSize,
		Keys:             cfg.Keys,
		Grace:            cfg.Grace,
		ScrollbackBytes:  cfg.ScrollbackBytes,
		NoConfirm:        noConfirm(cfg.Confirm),
	}, nil
}

// checkTUIConfig is what the TUI refuses in a loaded config beyond what
// config.Load checks: a theme that does not load and a [keys] action that
// does not exist. "config check" runs it too, so it never says ok to a file
// the TUI then refuses.
func checkTUIConfig(cfg config.Config, getenv func(string) string) (themes.Theme, error) {
	th, err := themes.LoadFrom(themes.UserDir(getenv), cfg.Theme)
	if err != nil {
		return th, fmt.Errorf("config theme: %w", err)
	}
	keys := ui.DefaultKeyMap()
	if err := keys.Apply(cfg.Keys); err != nil {
		return th, fmt.Errorf("config [keys]: %w", err)
	}
	return th, nil
}

// noConfirm maps the config's [confirm] table (true: ask, the default) to
// the confirmations the operator explicitly turned off.
func noConfirm(c config.Confirm) ui.NoConfirm {
	return ui.NoConfirm{Signal: !c.Signal, Teardown: !c.Teardown, BulkTeardown: !c.BulkTeardown}
}
