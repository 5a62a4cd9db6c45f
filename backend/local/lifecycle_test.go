package local

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

func TestConcurrentFirstStartsGiveOneDaemon(t *testing.T) {
	p := isolatedPaths(t)
	const racers = 4
	var wg sync.WaitGroup
	results := make([]Status, racers)
	errs := make([]error, racers)
	start := make(chan struct{})
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = EnsureRunning(context.Background(), testOptions(p))
		}()
	}
	close(start)
	wg.Wait()
	started := 0
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v", i, errs[i])
		}
		if results[i].PID != results[0].PID || results[i].PID <= 0 {
			t.Fatalf("racers disagree on the daemon: %+v", results)
		}
		if results[i].Started {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d racers say they started the daemon, want exactly 1: %+v", started, results)
	}
	if n := countServeProcesses(t, p); n != 1 {
		t.Fatalf("%d sandtop serve processes for one socket, want 1", n)
	}
}

func TestConcurrentStartsAcrossProcessesGiveOneDaemon(t *testing.T) {
	p := isolatedPaths(t)
	const racers = 4
	var wg sync.WaitGroup
	outs := make([]string, racers)
	errs := make([]error, racers)
	for i := range racers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(sandtopBin, "daemon", "start")
			cmd.Env = append(os.Environ(), EnvRuntimeDir+"="+p.RuntimeDir, EnvStateDir+"="+p.StateDir)
			b, err := cmd.CombinedOutput()
			outs[i], errs[i] = string(b), err
		}()
	}
	wg.Wait()
	started := 0
	for i := range racers {
		if errs[i] != nil {
			t.Fatalf("racer %d: %v: %s", i, errs[i], outs[i])
		}
		if strings.HasPrefix(outs[i], "started") {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d processes started a daemon, want 1:\n%s", started, strings.Join(outs, ""))
	}
	if n := countServeProcesses(t, p); n != 1 {
		t.Fatalf("%d sandtop serve processes for one socket, want 1", n)
	}
}

func TestKilledDaemonsStaleSocketIsReplaced(t *testing.T) {
	p := isolatedPaths(t)
	ctx := context.Background()
	first, err := EnsureRunning(ctx, testOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(first.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the killed daemon to be gone", func() bool { return !alive(first.PID) })
	if _, err := os.Stat(p.Socket()); err != nil {
		t.Fatalf("a SIGKILLed daemon should leave its socket behind for this test to mean anything: %v", err)
	}
	if _, err := Check(ctx, p); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("Check on a stale socket: %v, want ErrNotRunning", err)
	}
	second, err := EnsureRunning(ctx, testOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if !second.Started || second.PID == first.PID {
		t.Fatalf("stale socket not replaced: first %+v, second %+v", first, second)
	}
	if h := Probe(ctx, p.Socket()); !h.Healthy || h.PID != second.PID {
		t.Fatalf("socket does not lead to the new daemon: %+v", h)
	}
}

func TestWedgedListenerIsReplaced(t *testing.T) {
	// Something accepts on the socket but never answers /health: a hung
	// daemon. EnsureRunning must not trust it.
	p := isolatedPaths(t)
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	wedged := exec.Command(sandtopBin, "serve", "--listen", "unix:"+p.Socket(), "--state-dir", p.StateDir)
	// Dies with the test binary, even when go test's timeout kills it.
	wedged.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if err := wedged.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = wedged.Process.Kill(); _ = wedged.Wait() })
	testwait.For(t, 20*time.Second, "the first daemon to answer", func() bool { return Probe(context.Background(), p.Socket()).Healthy })
	// SIGSTOP freezes it: connects still succeed (the kernel queues them on
	// the listen backlog) but nothing answers.
	if err := syscall.Kill(wedged.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(wedged.Process.Pid, syscall.SIGCONT)
	// kill(2) returns before every thread has stopped; a probe in that window
	// still gets an answer and the daemon looks healthy.
	testwait.For(t, 10*time.Second, "every thread of the daemon to stop", func() bool { return allThreadsStopped(wedged.Process.Pid) })
	st, err := EnsureRunning(context.Background(), testOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	if !st.Started || st.PID == wedged.Process.Pid {
		t.Fatalf("a wedged daemon was kept: %+v", st)
	}
}

func TestStopEndsTheDaemonAndClearsTheSocket(t *testing.T) {
	p := isolatedPaths(t)
	ctx := context.Background()
	st, err := EnsureRunning(ctx, testOptions(p))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := Stop(ctx, p, 5*time.Second)
	if err != nil || pid != st.PID {
		t.Fatalf("Stop: pid %d, %v; want pid %d", pid, err, st.PID)
	}
	if alive(st.PID) {
		t.Fatal("daemon still alive after Stop")
	}
	if _, err := os.Stat(p.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
	if _, err := Stop(ctx, p, time.Second); !errors.Is(err, ErrNotRunning) {
		t.Fatalf("second Stop: %v, want ErrNotRunning", err)
	}
}

func TestDaemonGetsACuratedEnvironment(t *testing.T) {
	p := isolatedPaths(t)
	opts := testOptions(p)
	opts.Environ = append(os.Environ(), "SANDTOP_TEST_API_KEY=leak", "GITHUB_TOKEN=leak", "LC_SECRET=leak", "LC_ALL=C.UTF-8", "RANDOM_THING=x")
	st, err := EnsureRunning(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", st.PID))
	if err != nil {
		t.Fatal(err)
	}
	env := string(bytes.ReplaceAll(b, []byte{0}, []byte{'\n'}))
	if strings.Contains(env, "leak") || strings.Contains(env, "RANDOM_THING") {
		t.Fatalf("daemon inherited variables it should not:\n%s", env)
	}
	if !strings.Contains(env, "LC_ALL=C.UTF-8") || !strings.Contains(env, "PATH=") {
		t.Fatalf("daemon lost variables it needs:\n%s", env)
	}
}

func TestDaemonThatCannotStartReportsItsLog(t *testing.T) {
	p := isolatedPaths(t)
	opts := testOptions(p)
	opts.ServeArgs = []string{"--no-such-flag"}
	_, err := EnsureRunning(context.Background(), opts)
	if err == nil {
		t.Fatal("want an error from a daemon that exits at once")
	}
	if !strings.Contains(err.Error(), "exited while starting") || !strings.Contains(err.Error(), "no-such-flag") {
		t.Fatalf("error should say the daemon exited and quote its log: %v", err)
	}
}

// countServeProcesses counts live "sandtop serve" processes whose listen
// address is p's socket.
func countServeProcesses(t *testing.T, p Paths) int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range entries {
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err != nil {
			continue
		}
		args := strings.Split(string(b), "\x00")
		if len(args) > 3 && args[1] == "serve" && strings.Contains(string(b), p.Socket()) {
			var pid int
			fmt.Sscan(e.Name(), &pid)
			if alive(pid) {
				n++
			}
		}
	}
	return n
}
