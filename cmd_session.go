package main

import (
	"context"
	"errors"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// addSessionCommands adds the commands that talk to a sandbox.
func addSessionCommands(root *cobra.Command, g *globalFlags) {}

func teardownLocalWork(cmd *cobra.Command, g *globalFlags, grace time.Duration) error {
	return nil
}

func runTUI(ctx context.Context, g *globalFlags, t *tuiFlags, fs *pflag.FlagSet) error {
	return errors.New("the TUI is not wired yet")
}
