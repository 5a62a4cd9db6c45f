package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"sandtop/backend/target"
	"sandtop/themes"
	"sandtop/ui"
)

// newUISource adapts an open sandbox to the TUI's Source. It is nil until
// the TUI's backend adapter is wired in (see cmd_tui_source.go).
var newUISource func(s *target.Session) (ui.Source, error)

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
	if newUISource == nil {
		return errors.New("this build has no TUI adapter over the backend yet; use the CLI commands (sandtop --help)")
	}
	src, err := newUISource(s.Session)
	if err != nil {
		return err
	}
	opts.Source = src
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
