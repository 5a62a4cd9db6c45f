package daemon

import (
	"runtime"
	"testing"
	"time"

	"sandtop/testwait"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// A crowd of processes that ended leaves the registry as small as it
// found it once their exits are forgotten: its maps are made again (a Go
// map keeps the room of the most entries it held), and whoever else
// remembers the crowd is told.
func TestRegistryGivesBackACrowdsRoom(t *testing.T) {
	const n = 20000
	crowd := func(r *registry) {
		told := make(chan struct{}, 1)
		r.crowdGone = func() { told <- struct{}{} }
		procs := make([]*proc, n)
		for i := range procs {
			procs[i] = &proc{pid: uint32(i + 2)}
			r.add(procs[i])
		}
		for _, p := range procs {
			r.retire(p)
		}
		select {
		case <-told:
		case <-time.After(20 * time.Second):
			t.Fatal("the crowd's end was never told")
		}
	}
	// A first crowd, on a registry of its own, for what the runtime
	// keeps of one for good (for reuse).
	crowd(newRegistry(time.Millisecond))
	base := heapInUse()
	r := newRegistry(time.Millisecond)
	crowd(r)
	// Twenty thousand slots in each of two maps are about a MiB; what the
	// test binary's other goroutines allocate meanwhile is far less.
	const slack = 256 << 10
	testwait.For(t, 20*time.Second, "the registry to hold nothing of the crowd", func() bool {
		r.mu.Lock()
		empty := len(r.live) == 0 && len(r.exited) == 0
		r.mu.Unlock()
		return empty && heapInUse() < base+slack
	})
}
