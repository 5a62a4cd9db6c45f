package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	"golang.org/x/term"

	"sandtop/themes"
	"sandtop/ui"
)

// runTUI opens the TUI on the selected sandbox. Flags override the config.
func runTUI(ctx context.Context, g *globalFlags, tf *tuiFlags, fs *pflag.FlagSet) error {
	s, err := openSession(ctx, g)
	if err != nil {
		return err
	}
	defer s.Close()
	opts, err := tuiOptions(s, tf, fs)
	if err != nil {
		return err
	}
	dir, err := s.spawnCwd("")
	if err != nil {
		return err
	}
	src, err := ui.NewBackendSource(s.Client, s.Runtime, ui.BackendOptions{
		Name: s.Target.Name, Target: s.Target.Endpoint, Cwd: dir, Grace: s.cfg.Grace})
	if err != nil {
		return err
	}
	opts.Source, opts.Cwd = src, dir
	// The TUI needs a terminal; say so plainly instead of a garbled screen.
	if !term.IsTerminal(int(os.Stdin.Fd())) || !term.IsTerminal(int(os.Stdout.Fd())) {
		return errors.New("the TUI needs a terminal on stdin and stdout; use the CLI (sandtop ls, sandtop --help) from scripts")
	}
	return ui.Run(ctx, opts)
}

// tuiOptions merges defaults, the config file and the flags.
func tuiOptions(s *session, tf *tuiFlags, fs *pflag.FlagSet) (ui.Options, error) {
	name := s.cfg.Theme
	if flagSet(fs, "theme") {
		name = tf.theme
	}
	th, err := themes.Load(name)
	if err != nil {
		return ui.Options{}, usagef(fmt.Errorf("theme: %w", err))
	}
	keys := ui.DefaultKeyMap()
	if err := keys.Apply(s.cfg.Keys); err != nil {
		return ui.Options{}, fmt.Errorf("config [keys]: %w", err)
	}
	opts := ui.Options{
		SandboxName: s.Target.Name,
		Theme:       th,
		ReadOnly:    s.readOnly,
		Mouse:       tf.mouse,
		Keys:        s.cfg.Keys,
		Grace:       s.cfg.Grace,
	}
	return opts, nil
}
