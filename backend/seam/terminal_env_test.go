package seam

import (
	"context"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
)

// terminalTestEnv is a real in-process daemon, in extension or compat
// mode, with a Runtime over it.
type terminalTestEnv struct {
	d      *daemontest.Env
	rt     *Runtime
	cwd    string
	compat bool
}

func newTerminalTestEnv(t testing.TB, compat bool) *terminalTestEnv {
	t.Helper()
	return newTerminalTestEnvWith(t, daemon.Config{Compat: compat})
}

func newTerminalTestEnvWith(t testing.TB, cfg daemon.Config) *terminalTestEnv {
	t.Helper()
	e := &terminalTestEnv{d: daemontest.Start(t, cfg), cwd: t.TempDir(), compat: cfg.Compat}
	e.rt = e.newClient(t)
	return e
}

// newClient is a fresh Runtime on its own connection, as a restarted
// sandtop would have.
func (e *terminalTestEnv) newClient(t testing.TB) *Runtime {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := e.d.Dial()
	rt, err := NewRuntimeClients(ctx, c.Process, c.Supervisor, RuntimeConfig{
		RuntimeRoot: e.d.RuntimeRoot, Cwd: e.cwd, PollInterval: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "extension"
	if e.compat {
		want = "compat"
	}
	if got := rt.control.Kind(); got != want {
		t.Fatalf("runtime picked the %s control plane, want %s", got, want)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := rt.disposeTerminals(ctx); err != nil {
			t.Errorf("dispose terminals: %v", err)
		}
		if err := rt.Dispose(ctx); err != nil {
			t.Errorf("dispose: %v", err)
		}
	})
	return rt
}
