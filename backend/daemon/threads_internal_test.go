package daemon

import (
	"os"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/testwait"
)

// osThreads counts the threads the kernel lists for this process.
func osThreads(t *testing.T) int {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	return len(tasks)
}

// Threads a crowd of blocking system calls made are ended once it is
// over, down to the count at rest: the kernel lists no more than then.
func TestShedThreadsEndsACrowdsThreads(t *testing.T) {
	rest := threadsNow()
	restOS := osThreads(t)
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A blocking call the runtime cannot park: it holds a thread.
			_ = unix.Nanosleep(&unix.Timespec{Nsec: int64(300 * time.Millisecond)}, nil)
		}()
	}
	wg.Wait()
	crowd := threadsNow()
	if crowd < rest+4 {
		t.Fatalf("12 blocking calls left %d threads from %d at rest: the test made no crowd", crowd, rest)
	}
	testwait.For(t, 10*time.Second, "the crowd's threads to end", func() bool {
		shedThreads(rest)
		return threadsNow() <= rest && osThreads(t) <= restOS
	})
	t.Logf("threads: %d at rest (%d listed), %d after the crowd, %d shed (%d listed)", rest, restOS, crowd, threadsNow(), osThreads(t))
}
