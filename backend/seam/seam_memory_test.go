package seam

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"sandtop/testwait"
)

// liveHeap is the heap still reachable after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// Settled processes must not pin their output: the in-process daemon keeps
// each exited process (and its replay ring, 256 KiB) for ExitRetention, but
// not the lag window its Start stream once trailed by (up to 4 MiB). Not
// parallel: it measures the whole test binary's heap.
func TestSettledSpawnsDoNotRetainTheirOutput(t *testing.T) {
	s := newSeam(t, false, nil)
	const n, each = 8, 16 << 20
	base := liveHeap()
	for i := 0; i < n; i++ {
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(64 << 10), Stderr: OutputCollect(64 << 10)}, time.Second, nil,
			"/usr/bin/head", "-c", "16777216", "/dev/zero")
		wantExit(t, settle(t, h), 0)
		if got := h.Collected.Stdout.Total(); got != each {
			t.Fatalf("collected %d bytes, want %d", got, each)
		}
		waitTreeGone(t, h)
	}
	// The daemon retires a process once its stream is done; give the last
	// Start stream a moment to unsubscribe.
	grew := testwait.Value(t, 5*time.Second, func() (int64, error) {
		grew := int64(liveHeap()) - int64(base)
		// Per process: the 256 KiB replay, the 64 KiB tail, bookkeeping.
		if grew >= n*(1<<20) {
			return grew, fmt.Errorf("live heap grew by %.1f MiB over %d settled spawns of %d MiB each; want under 1 MiB a spawn", float64(grew)/(1<<20), n, each>>20)
		}
		return grew, nil
	})
	t.Logf("live heap grew by %.2f MiB over %d settled spawns", float64(grew)/(1<<20), n)
}
