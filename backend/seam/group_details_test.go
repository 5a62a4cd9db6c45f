package seam

import (
	"context"
	"testing"
	"time"

	"sandtop/testwait"
)

// sandtop's supervisor publishes the working directory and the files'
// times say when the program started and ended; the bash wrapper
// publishes no working directory.
func TestGroupDetailsGivesTheWorkingDirectoryAndTimes(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		dir := t.TempDir()
		before := time.Now().Add(-time.Second) // file times are coarser than the clock
		h, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/sh", "-c", "exit 0"}, Cwd: dir, Stdio: collectBoth(1024), Grace: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		settle(t, h)
		if s.compat {
			// The test binary's stock-envd plane runs the bash wrapper,
			// which publishes no working directory, and stock envd tells
			// no file times.
			d, err := s.rt.GroupDetails(context.Background(), h.StateDir())
			if err != nil || d.Cwd != "" || !d.Started.IsZero() {
				t.Fatalf("under the wrapper: %+v, %v", d, err)
			}
			return
		}
		var d GroupDetails
		testwait.For(t, 15*time.Second, "the exit status published", func() bool {
			if d, err = s.rt.GroupDetails(context.Background(), h.StateDir()); err != nil {
				t.Fatal(err)
			}
			return !d.Ended.IsZero()
		})
		if d.Cwd != dir {
			t.Fatalf("cwd %q, want %q", d.Cwd, dir)
		}
		if d.Started.Before(before) || d.Ended.Before(d.Started) || d.Ended.After(time.Now().Add(time.Second)) {
			t.Fatalf("started %v, ended %v: not in order since %v", d.Started, d.Ended, before)
		}
	})
}
