package seam

import (
	"context"
	"testing"
)

// A terminal's tag is found again by a fresh client, on both planes.
func TestTerminalTagIsListedAfterARestart(t *testing.T) {
	for _, compat := range []bool{false, true} {
		env := newTerminalTestEnv(t, compat)
		spec := shellSpec(env.cwd)
		spec.Tag = "demo:confirm"
		term, err := env.rt.SpawnTerminal(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		infos, err := env.newClient(t).listTerminals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 1 || infos[0].Pid != term.Pid() || infos[0].Tag != spec.Tag || infos[0].Grace != spec.Grace {
			t.Fatalf("compat=%v: listed %+v", compat, infos)
		}
		if err := term.Terminate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A snapshot on stock envd finds its terminals in the one Process.List
// it makes: tag, program and session.
func TestCompatSnapshotListsTerminals(t *testing.T) {
	env := newTerminalTestEnv(t, true)
	spec := shellSpec(env.cwd)
	spec.Tag = "snap"
	term, err := env.rt.SpawnTerminal(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer term.Terminate(context.Background())
	snap, err := env.newClient(t).Snapshot(context.Background(), WatchOptions{LiveOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Terminals) != 1 {
		t.Fatalf("terminals %+v", snap.Terminals)
	}
	got := snap.Terminals[0]
	if got.PID != term.Pid() || got.Tag != "snap" || !got.Sandtop || got.SID != term.Pid() || got.Started.IsZero() ||
		len(got.Argv) == 0 || got.Argv[0] != spec.Argv[0] {
		t.Errorf("listed %+v, want pid %d running %q", got, term.Pid(), spec.Argv)
	}
}
