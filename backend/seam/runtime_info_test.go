package seam

import (
	"slices"
	"testing"
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
		if !info.Extension || info.Version == "" || info.RuntimeRoot != s.rt.RuntimeRoot() || !slices.Contains(info.Capabilities, "shim") {
			t.Fatalf("sandtop's daemon: %+v (runtime root %s)", info, s.rt.RuntimeRoot())
		}
	})
}
