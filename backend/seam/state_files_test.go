package seam

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// The commands a front-end has besides spawning: a group is signalled and
// asked after by pgid, and once it is over its state directory can be
// removed; a live group's, a held one's and anything that is not a state
// directory of the runtime root stay. The hostname is the sandbox's on
// either plane.
func TestSignalAliveAndRemoveGroupState(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		ctx := s.ctx()
		if h, err := s.rt.Hostname(ctx); err != nil || h == "" {
			t.Fatalf("hostname %q, %v", h, err)
		} else if want, _ := os.Hostname(); h != want {
			t.Fatalf("hostname %q, want this machine's %q", h, want)
		}

		h := spawnReady(t, s, time.Second, "echo ready; exec sleep 1000")
		dir := h.StateDir()
		if alive, err := s.rt.GroupAlive(ctx, h.Pgid()); err != nil || !alive {
			t.Fatalf("alive after spawn: %v %v", alive, err)
		}
		if delivered, err := s.rt.Signal(ctx, h.Pgid(), syscall.SIGCONT); err != nil || !delivered {
			t.Fatalf("SIGCONT: delivered %v, %v", delivered, err)
		}
		if _, err := s.rt.Signal(ctx, 1, syscall.SIGCONT); err == nil {
			t.Fatal("pgid 1 was signalled")
		}
		if err := s.rt.RemoveGroupState(ctx, dir); err == nil || !strings.Contains(err.Error(), "held by this runtime") {
			t.Fatalf("removing a held group's state: %v", err)
		}
		h.Detach()
		if err := s.rt.RemoveGroupState(ctx, dir); err == nil || !strings.Contains(err.Error(), "live member") {
			t.Fatalf("removing a live group's state: %v", err)
		}
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("a refused removal touched the state: %v", err)
		}

		if err := s.rt.TeardownGroup(ctx, h.Pgid(), time.Second, nil); err != nil {
			t.Fatal(err)
		}
		if alive, err := s.rt.GroupAlive(ctx, h.Pgid()); err != nil || alive {
			t.Fatalf("alive after teardown: %v %v", alive, err)
		}
		// A zombie left to reap still takes a signal; once it is reaped,
		// nothing does.
		testwait.For(t, 15*time.Second, "a signal to the ended group to reach no one", func() bool {
			delivered, err := s.rt.Signal(ctx, h.Pgid(), syscall.SIGCONT)
			if err != nil {
				t.Fatal(err)
			}
			return !delivered
		})
		if err := s.rt.RemoveGroupState(ctx, dir); err != nil {
			t.Fatalf("removing a finished group's state: %v", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("state still there: %v", err)
		}
		if err := s.rt.RemoveGroupState(ctx, dir); err != nil {
			t.Fatalf("removing it again: %v", err)
		}

		other := filepath.Join(t.TempDir(), "processes", "x")
		if err := os.MkdirAll(other, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{other, filepath.Dir(dir), dir + "/..", "processes/x"} {
			if err := s.rt.RemoveGroupState(ctx, bad); err == nil {
				t.Fatalf("RemoveGroupState(%q) was accepted", bad)
			}
		}
		if _, err := os.Stat(other); err != nil {
			t.Fatalf("another root's state was touched: %v", err)
		}
	})
}
