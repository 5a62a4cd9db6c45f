package seam

import (
	"context"
	"slices"
	"testing"
	"time"
)

// The daemon is asked once (Hello, when the runtime is built) and Info
// answers from that, on both planes.
func TestRuntimeInfoComesFromOneHello(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		before := s.wire.count("Hello")
		info := s.rt.Info()
		for range 3 {
			if again := s.rt.Info(); again.Version != info.Version {
				t.Fatalf("Info changed: %+v then %+v", info, again)
			}
		}
		if n := s.wire.count("Hello") - before; n != 0 {
			t.Fatalf("Info sent %d Hello calls; it should answer from the runtime's", n)
		}
		if s.compat {
			if info.Extension || !slices.Equal(info.Capabilities, []string{"compat"}) {
				t.Fatalf("stock envd: %+v", info)
			}
			return
		}
		if !info.Extension || info.Version == "" || info.RuntimeRoot != s.rt.runtimeRoot() || !slices.Contains(info.Capabilities, "shim") {
			t.Fatalf("sandtop's daemon: %+v (runtime root %s)", info, s.rt.runtimeRoot())
		}
	})
}

// A runtime given what an earlier one learnt (Known) asks its daemon
// nothing to be built, and works as the first: a fleet re-dials a sandbox
// for every refresh of its counts.
func TestRuntimeWithKnownAsksNoHello(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		before := len(s.wire.callsOf(""))
		rt, err := NewRuntimeClients(ctx, s.proc, s.sup, RuntimeConfig{Cwd: "/", PollInterval: 5 * time.Millisecond, Known: s.rt.Known()})
		if err != nil {
			t.Fatal(err)
		}
		defer rt.Dispose(ctx)
		if n := len(s.wire.callsOf("")) - before; n != 0 {
			t.Fatalf("a runtime built from Known made %d calls", n)
		}
		if rt.Info().Extension != s.rt.Info().Extension || rt.runtimeRoot() != s.rt.runtimeRoot() {
			t.Fatalf("built from Known: %+v root %s; the first: %+v root %s", rt.Info(), rt.runtimeRoot(), s.rt.Info(), s.rt.runtimeRoot())
		}
		if _, err := rt.Snapshot(ctx, WatchOptions{LiveOnly: true}); err != nil {
			t.Fatalf("snapshot through a runtime built from Known: %v", err)
		}
	})
}
