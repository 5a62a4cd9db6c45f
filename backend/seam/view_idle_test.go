package seam

import (
	"context"
	"testing"
	"time"
)

// A watch of a sandbox where nothing changes goes quiet: the feed's tick
// still re-reads the terminals, but a snapshot equal to the last one is
// neither composed nor sent, so an idle TUI has nothing to redraw.
func TestIdleWatchGoesQuiet(t *testing.T) {
	s := newSeam(t, false, nil)
	h := spawnReady(t, s, time.Second, `echo ready; exec sleep 1000`)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := s.rt.Watch(ctx, WatchOptions{Interval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// Let the group show and the first scans of published state land.
	seen := false
	settled := time.After(4 * time.Second)
	for !seen || settled != nil {
		select {
		case snap, ok := <-w.C():
			if !ok {
				t.Fatalf("the watch ended: %v", w.Err())
			}
			seen = seen || findView(snap, h.Pgid()) != nil
		case <-settled:
			settled = nil
		}
	}
	select {
	case snap := <-w.C():
		t.Fatalf("an idle watch sent another snapshot: %+v", snap)
	case <-time.After(2 * time.Second): // twenty of the feed's ticks
	}
}
