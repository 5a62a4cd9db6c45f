// Package cli is sandtop's command line: one cobra command per verb, the
// TUI's entry (plain "sandtop") and the flag-and-config resolution of which
// sandbox a command acts on. The sandtop binary's main only calls Main.
package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// Main executes one command line and returns the process exit code.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitCodeOf(err)
	if msg := err.Error(); msg != "" && !isSilent(err) {
		fmt.Fprintln(os.Stderr, "sandtop: "+oneLine(msg))
	}
	return code
}
