// Command sandtop supervises the processes of sandboxes: a Bubble Tea TUI
// (plain "sandtop") and a CLI with the same operations, over one seam, on
// the embedded local sandbox or on any envd-compatible daemon.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

// run executes one command line and returns the process exit code.
func run(args []string) int {
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
