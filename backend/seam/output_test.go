package seam

import (
	"context"
	"strings"
	"testing"
	"time"
)

// Output replays what the group wrote and follows it live, by pgid (what
// "sandtop logs" takes) or by the wrapper's pid, without the wrapper's
// publication line.
func TestOutputReplaysThenFollowsLive(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := spawnReady(t, s, time.Second, `echo ready; echo err >&2; sleep 0.3; echo later; exec sleep 1000`)
		for _, pid := range []int{h.Pgid(), h.StartPid()} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			out, err := s.rt.Output(ctx, pid)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			var got strings.Builder
			buf := make([]byte, 4096)
			for !strings.Contains(got.String(), "later\n") {
				n, err := out.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					t.Fatalf("pid %d: read %q: %v", pid, got.String(), err)
				}
			}
			_ = out.Close()
			cancel()
			text := got.String()
			if !strings.Contains(text, "ready\n") || !strings.Contains(text, "err\n") || strings.Contains(text, "sandtop-published") {
				t.Fatalf("pid %d: output %q", pid, text)
			}
		}
		terminateAndProve(t, s, h)
		if _, err := s.rt.Output(context.Background(), 1); err == nil {
			t.Fatal("pid 1 accepted")
		}
	})
}
