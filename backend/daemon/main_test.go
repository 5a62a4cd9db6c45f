package daemon_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"sandtop/backend/daemon"
	"sandtop/backend/shim"
	"sandtop/testreap"
)

// childEnvVar makes the test binary run as a standalone daemon (for the
// memory benchmark, which must measure the daemon's own peak RSS).
const childEnvVar = "SANDTOP_DAEMONTEST_CHILD_STATE"

func TestMain(m *testing.M) {
	// The daemon under test starts this test binary as its shims.
	shim.RunIfSubcommand()
	if state := os.Getenv(childEnvVar); state != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
		defer stop()
		err := daemon.RunServe(ctx, daemon.ServeOptions{
			Listen:     "unix:" + state + "/d.sock",
			StateDir:   state,
			KillOnExit: true,
			Env:        []string{"PATH=/usr/bin:/bin"},
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "daemon child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testreap.Warden()
	os.Exit(m.Run())
}
