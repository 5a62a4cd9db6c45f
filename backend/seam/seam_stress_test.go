package seam

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/seam/control"
)

// stressCount is how many group signals the stress test sends per plane:
// SANDTOP_STRESS_N when set, else a small count under -short or CI (where
// the whole suite has a time budget), else the full 2,000.
func stressCount(t *testing.T) int {
	if s := os.Getenv("SANDTOP_STRESS_N"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("SANDTOP_STRESS_N=%q is not a positive count", s)
		}
		return n
	}
	if testing.Short() || os.Getenv("CI") != "" {
		return 200
	}
	return 2000
}

// stressCase is one kind of group in the stress mix: the program, the
// signal its group is sent, whether the signal may come before the
// program has set its traps, and the fact that must be published.
type stressCase struct {
	name   string
	script string
	sig    syscall.Signal
	early  bool
	want   Outcome
}

func stressMix() []stressCase {
	plain := "echo ready; exec sleep 1000"
	trapped := func(sig string, code int) string {
		return fmt.Sprintf(`trap "exit %d" %s; echo ready; while :; do sleep 0.1; done`, code, sig)
	}
	killed := func(sig syscall.Signal) Outcome { return Outcome{Signal: control.SignalName(sig)} }
	return []stressCase{
		{"TERM", plain, syscall.SIGTERM, false, killed(syscall.SIGTERM)},
		{"INT", plain, syscall.SIGINT, false, killed(syscall.SIGINT)},
		{"KILL", plain, syscall.SIGKILL, false, killed(syscall.SIGKILL)},
		{"SEGV", plain, syscall.SIGSEGV, false, killed(syscall.SIGSEGV)},
		// Sent as soon as the group exists: the program may not run yet.
		{"early TERM", plain, syscall.SIGTERM, true, killed(syscall.SIGTERM)},
		{"early INT", plain, syscall.SIGINT, true, killed(syscall.SIGINT)},
		{"early KILL", plain, syscall.SIGKILL, true, killed(syscall.SIGKILL)},
		{"early SEGV", plain, syscall.SIGSEGV, true, killed(syscall.SIGSEGV)},
		// Trapped, exiting with the very status the signal death has.
		{"trapped TERM", trapped("TERM", 143), syscall.SIGTERM, false, control.ExitOutcome(143)},
		{"trapped INT", trapped("INT", 130), syscall.SIGINT, false, control.ExitOutcome(130)},
		{"trapped SEGV", trapped("SEGV", 139), syscall.SIGSEGV, false, control.ExitOutcome(139)},
	}
}

// stressHogs runs two `yes` per core until the test ends.
func stressHogs(t *testing.T) {
	for range 2 * runtime.NumCPU() {
		c := exec.Command("yes")
		// A hog must die with the test binary, also when go test's timeout
		// kills it before any cleanup runs.
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
	}
}

// The stress: N group signals (TERM, INT, KILL, SEGV; early and
// late; trapped and not), 50 at a time, while two CPU hogs per core run.
// Every group must settle within a deadline, with exactly the expected
// fact published. Planes run one after the other, so each has 50 in flight.
func TestStressGroupSignalsPublishExactFacts(t *testing.T) {
	n := stressCount(t)
	stressHogs(t)
	for _, p := range bothPlanes {
		t.Run(p.name, func(t *testing.T) {
			s := newSeam(t, p.compat, nil)
			start := time.Now()
			misreported, hung := runStress(t, s, n, 50)
			t.Logf("slowest spawn-to-settled per case:%v", stressTimes)
			t.Logf("%s plane: %d group signals, 50 at a time, %d CPU hogs: %d misreported, %d hung, %v",
				p.name, n, 2*runtime.NumCPU(), misreported, hung, time.Since(start).Round(time.Millisecond))
			if misreported+hung > 0 {
				t.Errorf("%d of %d groups misreported and %d hung", misreported, n, hung)
			}
		})
	}
}

// runStress sends n group signals through s, inFlight at a time, and
// counts the groups whose published fact was wrong and those that never
// settled.
func runStress(t *testing.T, s *seam, n, inFlight int) (misreported, hung int) {
	mix := stressMix()
	var bad, stuck atomic.Int64
	var mu sync.Mutex
	var examples []string
	note := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if len(examples) < 10 {
			examples = append(examples, fmt.Sprintf(format, args...))
		}
	}
	slots := make(chan struct{}, inFlight)
	var wg sync.WaitGroup
	for i := range n {
		c := mix[i%len(mix)]
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			got, settled, err := stressOne(s, c)
			switch {
			case err != nil:
				bad.Add(1)
				note("%s: %v", c.name, err)
			case !settled:
				stuck.Add(1)
				note("%s: never settled", c.name)
			case !sameOutcome(got, c.want):
				bad.Add(1)
				note("%s: published %v, want %v", c.name, got, c.want)
			}
		}()
	}
	wg.Wait()
	for _, e := range examples {
		t.Log(e)
	}
	return int(bad.Load()), int(stuck.Load())
}

// stressSettle bounds how long a signalled group may take to settle on a
// loaded machine; a group still running by then counts as hung.
const stressSettle = 90 * time.Second

func stressOne(s *seam, c stressCase) (Outcome, bool, error) {
	t0 := time.Now()
	defer func() { stressTimes.add(c.name, time.Since(t0)) }()
	ctx, cancel := context.WithTimeout(context.Background(), stressSettle)
	defer cancel()
	h, err := s.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/bin/sh", "-c", c.script}, Cwd: "/", Stdio: collectBoth(1024), Grace: 100 * time.Millisecond})
	if err != nil {
		return Outcome{}, false, fmt.Errorf("spawn: %w", err)
	}
	if !c.early {
		for !strings.Contains(h.Collected.Stdout.ReadFrom(0).Text, "ready") {
			select {
			case <-h.Done():
				return Outcome{}, false, fmt.Errorf("ended before it was ready")
			case <-ctx.Done():
				_ = syscall.Kill(-h.Pgid(), syscall.SIGKILL)
				return Outcome{}, false, fmt.Errorf("never ready")
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	if _, err := s.rt.control.SignalGroup(ctx, h.Pgid(), c.sig); err != nil {
		return Outcome{}, false, fmt.Errorf("signal %v: %w", c.sig, err)
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		// Hung: end it so the next groups are not starved, and say so.
		_ = syscall.Kill(-h.Pgid(), syscall.SIGKILL)
		return Outcome{}, false, nil
	}
	o, err := h.Outcome()
	return o, true, err
}

func sameOutcome(a, b Outcome) bool {
	if (a.ExitCode == nil) != (b.ExitCode == nil) {
		return false
	}
	if a.ExitCode != nil && *a.ExitCode != *b.ExitCode {
		return false
	}
	return a.Signal == b.Signal
}

// stressTimes keeps, per case, the slowest spawn-to-settled time seen.
var stressTimes = &caseTimes{max: map[string]time.Duration{}}

type caseTimes struct {
	mu  sync.Mutex
	max map[string]time.Duration
}

func (c *caseTimes) add(name string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d > c.max[name] {
		c.max[name] = d
	}
}

func (c *caseTimes) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	for name, d := range c.max {
		fmt.Fprintf(&b, " %s=%v", name, d.Round(time.Millisecond))
	}
	c.max = map[string]time.Duration{}
	return b.String()
}
