package daemon

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// The Go runtime makes a thread whenever all it has are busy or blocked
// in system calls, and keeps every thread it made: a crowd of processes
// starting and ending at once leaves a daemon with a thread or two more
// than it had at rest, for good. After a crowd (giveBackMemory) the
// daemon ends its idle threads down to the count it had at rest, the way
// it returns the crowd's memory.

// restingThreads is the runtime's thread count when the daemon last went
// from no live process to one (noteRest): where a crowd started from.
var restingThreads atomic.Int64

// threadsNow is the number of threads the Go runtime has.
func threadsNow() int {
	s := []metrics.Sample{{Name: "/sched/threads/total:threads"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int(s[0].Value.Uint64())
}

// noteRest records the thread count of a daemon at rest.
func noteRest() { restingThreads.Store(int64(threadsNow())) }

// shedThreads ends idle threads of the runtime until no more than n are
// left, or one would not go. A goroutine that exits while locked to its
// thread ends that thread, and the runtime hands its work to an idle
// one; when there is none, it starts a new thread and the count stays,
// which ends the shedding.
func shedThreads(n int) {
	for range 64 { // a bound: a crowd leaves a few
		before := threadsNow()
		if n <= 0 || before <= n {
			return
		}
		ended := make(chan bool, 1)
		go func() {
			runtime.LockOSThread()
			// The main thread never ends: the runtime would only park it,
			// and start another one for its work.
			if unix.Gettid() == unix.Getpid() {
				runtime.UnlockOSThread()
				ended <- false
				return
			}
			ended <- true
		}()
		if !<-ended {
			continue
		}
		deadline := time.Now().Add(100 * time.Millisecond)
		for threadsNow() >= before {
			if time.Now().After(deadline) {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}
}
