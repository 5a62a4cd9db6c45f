// Command e2emain runs the TUI over a sandtop daemon's unix socket. The
// end-to-end test drives it in tmux; it wires ui.NewBackendSource exactly as
// main.go is meant to (see ui.NewBackendSource), so the test does not depend
// on the CLI's flag handling.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"sandtop/backend"
	"sandtop/backend/envd"
	"sandtop/ui"
)

func main() {
	sock := flag.String("socket", "", "unix socket of a sandtop daemon")
	readOnly := flag.Bool("read-only", false, "refuse every mutation")
	grace := flag.Duration("grace", 2*time.Second, "teardown grace")
	flag.Parse()
	if err := run(*sock, *readOnly, *grace); err != nil {
		fmt.Fprintln(os.Stderr, "e2emain:", err)
		os.Exit(1)
	}
}

func run(sock string, readOnly bool, grace time.Duration) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	c, err := envd.Dial("unix:" + sock)
	if err != nil {
		return err
	}
	defer c.Close()
	cwd, _ := os.Getwd()
	rt, err := backend.NewRuntime(ctx, c, backend.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: cwd})
	if err != nil {
		return err
	}
	src, err := ui.NewBackendSource(c, rt, ui.BackendOptions{Name: "e2e", Target: "unix:" + sock, Cwd: cwd, Grace: grace})
	if err != nil {
		return err
	}
	return ui.Run(ctx, ui.Options{Source: src, SandboxName: "e2e", ReadOnly: readOnly, Grace: grace})
}
