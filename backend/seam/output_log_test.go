package seam

import (
	"context"
	"strings"
	"testing"
	"time"

	"sandtop/outlog"
	"sandtop/sandbox"
	"sandtop/testwait"
)

// What a group keeps reads back in arrival order, each line with its time,
// when sandtop's supervisor keeps it; the bash wrapper (stock envd where
// the supervisor cannot run) keeps no times, and its spills read as they
// always did: stdout, then stderr.
func TestOutputLogReadsKeptOutputInArrivalOrderWithTimes(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		before := time.Now()
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: KeptOutput(), Stderr: KeptOutput()}, time.Second, nil,
			"/bin/sh", "-c", "echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; exec sleep 30")
		defer terminateAndProve(t, s, h)
		var lines []outlog.Line
		var marked bool
		readAll := func() {
			lines = nil
			var l outlog.Liner
			rd := s.rt.OutputLog(h.StateDir())
			err := rd.ReadAll(context.Background(), func(seg outlog.Segment) error {
				l.Add(seg, func(line outlog.Line) { lines = append(lines, line) })
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			marked = rd.Marked()
		}
		testwait.For(t, 15*time.Second, "all three lines", func() bool { readAll(); return len(lines) == 3 })
		// Once more with all of it written: a read while the wrapper's
		// spills grow sees them as they were at each read.
		readAll()
		snap, err := s.rt.Snapshot(context.Background(), WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		supervisor := ""
		for _, g := range snap.Groups {
			if g.PGID == h.Pgid() {
				supervisor = g.Supervisor
			}
		}
		var got []string
		for i, l := range lines {
			got = append(got, l.Stream.String()+":"+strings.TrimSuffix(string(l.Text), "\n"))
			if supervisor == sandbox.SupervisorWrapper {
				if !l.At.IsZero() {
					t.Fatalf("the wrapper kept no times, yet line %d has %v", i, l.At)
				}
				continue
			}
			if l.At.Before(before) || l.At.After(time.Now()) || i > 0 && l.At.Before(lines[i-1].At) {
				t.Fatalf("line %d %q arrived at %v: not between the spawn and now, in order", i, l.Text, l.At)
			}
		}
		want, wantMarked := "stdout:out1 stderr:err1 stdout:out2", true
		if supervisor == sandbox.SupervisorWrapper {
			want, wantMarked = "stdout:out1 stdout:out2 stderr:err1", false
		}
		if strings.Join(got, " ") != want || marked != wantMarked {
			t.Fatalf("under the %q supervisor, read back %v (marked %v); want %s (marked %v)", supervisor, got, marked, want, wantMarked)
		}
	})
}
