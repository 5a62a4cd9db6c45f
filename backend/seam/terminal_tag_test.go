package seam

import (
	"context"
	"testing"
)

func TestTerminalTagRoundTrips(t *testing.T) {
	const id = "0123456789abcdef0123456789abcdef"
	for _, user := range []string{"", "demo:top", "a b: c"} {
		gotID, grace, gotUser, ok := parseTerminalTag(terminalTag(id, 1500, user))
		if !ok || gotID != id || grace != 1500 || gotUser != user {
			t.Fatalf("tag %q: %q %d %q %v", user, gotID, grace, gotUser, ok)
		}
	}
	// Written before user tags existed.
	if _, grace, user, ok := parseTerminalTag("sandtop-terminal:" + id + ":300"); !ok || grace != 300 || user != "" {
		t.Fatalf("old tag: %d %q %v", grace, user, ok)
	}
	for _, bad := range []string{"sandtop-terminal:" + id, "sandtop-terminal:" + id + ":x:y", "other:" + id + ":1"} {
		if _, _, _, ok := parseTerminalTag(bad); ok {
			t.Fatalf("%q parsed", bad)
		}
	}
}

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
