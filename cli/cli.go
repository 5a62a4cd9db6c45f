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

	"sandtop/safetext"
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
		// Errors may quote the sandbox (paths, problems): no escapes reach
		// the terminal.
		fmt.Fprintln(os.Stderr, "sandtop: "+safetext.Line(oneLine(msg)))
	}
	return code
}
