package daemon

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A process read with an empty argv (one caught inside execve, or a
// zombie) is not cached: the next look reads it again instead of showing
// it without a command for the cache's whole lifetime.
func TestIdentityCacheKeepsNoEmptyArgv(t *testing.T) {
	cmd := exec.Command("true")
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Wait() })
	pid := cmd.Process.Pid
	// Wait for it to be a zombie without reaping it: its cmdline reads empty.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	st, err := readStat(pid)
	if err != nil {
		t.Fatal(err)
	}
	c := newIdentityCache()
	if id := c.get(st, time.Now()); len(id.argv) != 0 {
		t.Fatalf("a zombie's argv read as %q", id.argv)
	}
	if _, kept := c.m[pid]; kept {
		t.Fatal("an empty argv was cached")
	}
	self, err := readStat(unix.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if id := c.get(self, time.Now()); len(id.argv) == 0 {
		t.Fatal("our own argv read empty")
	}
	if _, kept := c.m[self.pid]; !kept {
		t.Fatal("a real argv was not cached")
	}
}

func TestWatchWaitKeepsAWatcherWithinItsBudget(t *testing.T) {
	for _, c := range []struct{ interval, cost, want time.Duration }{
		{time.Second, 2 * time.Millisecond, time.Second},              // cheap: as asked
		{time.Second, 40 * time.Millisecond, 1960 * time.Millisecond}, // 40 ms of every 2 s
		{100 * time.Millisecond, 10 * time.Millisecond, 490 * time.Millisecond},
	} {
		got := watchWait(c.interval, c.cost)
		if got != c.want {
			t.Errorf("watchWait(%v, %v) = %v, want %v", c.interval, c.cost, got, c.want)
		}
		if share := float64(c.cost) / float64(c.cost+got); share > watchBudget+1e-9 {
			t.Errorf("a read of %v every %v is %.1f%% of a core", c.cost, got, 100*share)
		}
	}
}
