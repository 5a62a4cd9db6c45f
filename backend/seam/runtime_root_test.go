package seam

import (
	"context"
	"os"
	"path"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
)

// On a daemon that names no runtime root (stock envd's surface), the seam
// keeps its state under the sandbox user's home, with no configuration.
func TestStockEnvdRuntimeRootDefaultsToTheUsersState(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{Compat: true})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rt, err := NewRuntimeClients(ctx, env.Client.Process, env.Client.Supervisor, RuntimeConfig{Cwd: "/", PollInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Dispose(ctx)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rt.runtimeRoot(), path.Join(home, DefaultRuntimeRootIn); got != want {
		t.Fatalf("runtime root %q, want %q", got, want)
	}
}
