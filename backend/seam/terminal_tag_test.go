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
		infos, err := env.newClient(t).ListTerminals(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 1 || infos[0].Pid != term.Pid() || infos[0].Tag != spec.Tag || infos[0].GraceMs != spec.GraceMs {
			t.Fatalf("compat=%v: listed %+v", compat, infos)
		}
		if err := term.Terminate(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
