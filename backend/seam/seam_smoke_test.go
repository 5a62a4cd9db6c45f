package seam

import (
	"testing"
	"time"
)

func TestSpawnCollectsOutputAndExitCode(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1<<20), time.Second, nil, "/bin/sh", "-c", "printf out; printf err >&2; exit 7")
		if h.Pid() <= 1 {
			t.Fatalf("pid %d right after Spawn", h.Pid())
		}
		o := settle(t, h)
		wantExit(t, o, 7)
		if got := h.Collected.Stdout.ReadFrom(0).Text; got != "out" {
			t.Errorf("stdout %q", got)
		}
		if got := h.Collected.Stderr.ReadFrom(0).Text; got != "err" {
			t.Errorf("stderr %q", got)
		}
		waitTreeGone(t, h)
	})
}
