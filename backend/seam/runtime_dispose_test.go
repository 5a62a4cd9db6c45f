package seam

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
)

// Dispose owns terminals as well as process groups: it ends both, reports
// the failures of both together, and a retry finishes the job.
func TestDisposeJoinsTerminalsAndProcessesAndReportsBoth(t *testing.T) {
	for _, compat := range []bool{false, true} {
		name := "extension"
		if compat {
			name = "compat"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := newTerminalTestEnv(t, compat)
			ctx := context.Background()
			term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
			if err != nil {
				t.Fatal(err)
			}
			h, err := env.rt.Spawn(ctx, SpawnSpec{
				Argv:  []string{"/bin/sh", "-c", `trap "" TERM; echo ready; while :; do sleep 1; done`},
				Cwd:   env.cwd,
				Stdio: Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(64), Stderr: OutputCollect(64)},
				Grace: 200 * time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			testwait.NoError(t, 10*time.Second, func() error {
				if !strings.Contains(h.Collected.Stdout.ReadFrom(0).Text, "ready") {
					return errors.New("not ready")
				}
				return nil
			})

			// An expired context fails both joins; nothing is released.
			dead, cancel := context.WithCancel(ctx)
			cancel()
			err = env.rt.Dispose(dead)
			if err == nil || !strings.Contains(err.Error(), "process group") || !strings.Contains(err.Error(), "terminal") {
				t.Fatalf("first Dispose: %v", err)
			}
			if env.rt.liveHandles() != 1 || env.rt.ownedTerminals() != 1 {
				t.Fatalf("after a failed Dispose: %d handles, %d terminals owned", env.rt.liveHandles(), env.rt.ownedTerminals())
			}

			retry, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			if err := env.rt.Dispose(retry); err != nil {
				t.Fatal(err)
			}
			if env.rt.liveHandles() != 0 || env.rt.ownedTerminals() != 0 {
				t.Fatalf("after Dispose: %d handles, %d terminals owned", env.rt.liveHandles(), env.rt.ownedTerminals())
			}
			select {
			case <-term.Done():
			default:
				t.Fatal("the terminal is still running")
			}
			wantSignal(t, settle(t, h), "SIGKILL")
			if _, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd)); !errors.Is(err, ErrDisposing) {
				t.Fatalf("spawn after Dispose: %v", err)
			}
		})
	}
}
