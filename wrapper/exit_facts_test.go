package wrapper

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/testwait"
)

// cpuHogs keeps two `yes` processes per core busy until the test ends, so
// the wrapper's races are exercised the way a loaded sandbox exercises them.
func cpuHogs(t *testing.T) {
	t.Helper()
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

// wrapped is one wrapper run whose group the test signals.
type wrapped struct {
	dir    string
	pgid   int
	cmd    *exec.Cmd
	lines  chan string   // the program's stdout lines (when not spilled)
	exited chan struct{} // closed when the outer half ends (not reaped)
	reaped sync.Once
}

// startWrapped starts argv through the wrapper's classic halves, as on stock
// envd. It returns once the group is published.
func startWrapped(t *testing.T, argv []string, spill int64) *wrapped {
	t.Helper()
	dir := StateDir(t.TempDir(), "p1")
	inv := Invocation{StateDir: dir, Argv: argv, StdoutSpill: spill, StderrSpill: NoSpill}
	cmd, args, err := inv.Command("/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := EnvironmentPayload([]string{"PATH=" + os.Getenv("PATH")})
	c := exec.Command(cmd, args...)
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	c.Stdin = strings.NewReader(string(payload))
	// Dies with the test binary, even when go test's timeout kills it.
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	out, err := c.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	w := &wrapped{dir: dir, cmd: c, lines: make(chan string, 16), exited: make(chan struct{})}
	br := bufio.NewReader(out)
	line, err := br.ReadString('\n')
	if err == nil {
		w.pgid, err = ParsePublishedLine(strings.TrimSuffix(line, "\n"))
	}
	if err != nil {
		_ = c.Process.Kill()
		_ = c.Wait()
		t.Fatalf("wrapper did not publish: %v", err)
	}
	go func() {
		defer close(w.lines)
		for {
			l, err := br.ReadString('\n')
			if l != "" {
				select {
				case w.lines <- strings.TrimSuffix(l, "\n"):
				default:
				}
			}
			if err != nil {
				_, _ = io.Copy(io.Discard, br)
				return
			}
		}
	}()
	// The group is the inner half's, which the outer one outlives. Once
	// the outer half has ended, the group id may already be another
	// test's group (pids wrap around within a CI run when pid_max is
	// 32768), so the cleanup signals the group only while the outer half
	// runs. Waiting with WNOWAIT leaves the outer half unreaped until the
	// cleanup, so the check cannot race with a reap.
	go func() {
		var info unix.Siginfo
		for {
			err := unix.Waitid(unix.P_PID, c.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
			if err != unix.EINTR {
				break
			}
		}
		close(w.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-w.exited:
		default:
			_ = syscall.Kill(-w.pgid, syscall.SIGKILL)
			<-w.exited
		}
		w.reap()
	})
	return w
}

// reap collects the ended outer half (once), for its ProcessState.
func (w *wrapped) reap() { w.reaped.Do(func() { _ = w.cmd.Wait() }) }

// ready waits for the program's "ready" line: its traps are set.
func (w *wrapped) ready(t *testing.T) {
	t.Helper()
	select {
	case l := <-w.lines:
		if l != "ready" {
			t.Fatalf("program said %q before ready", l)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("program never said ready")
	}
}

func (w *wrapped) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := syscall.Kill(-w.pgid, sig); err != nil {
		t.Fatalf("signal %v to group %d: %v", sig, w.pgid, err)
	}
}

// fact waits (with a deadline: a wrapper that never ends is a group that
// never settles) and returns what was published, e.g. "exit 7" or
// "signal 15 (exit-code 143)".
func (w *wrapped) fact(t *testing.T) string {
	t.Helper()
	select {
	case <-w.exited:
	case <-time.After(60 * time.Second):
		t.Fatalf("wrapper of group %d hung; its session:\n%s ", w.pgid, sessionTable(w.pgid))
	}
	w.reap()
	code := strings.TrimSpace(readOr(filepath.Join(w.dir, ExitCodeFile)))
	sig := strings.TrimSpace(readOr(filepath.Join(w.dir, SignalFile)))
	if sig != "" {
		return fmt.Sprintf("signal %s (exit-code %s)", sig, code)
	}
	return "exit " + code
}

func signalFact(sig syscall.Signal) string {
	return fmt.Sprintf("signal %d (exit-code %d)", sig, 128+int(sig))
}

// manyTimes runs one case n times, 8 at a time.
func manyTimes(t *testing.T, n int, run func(t *testing.T)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	for range n {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			run(t)
		}()
	}
	wg.Wait()
}

// A running program killed through its group is published as that signal,
// under load, whichever signal it is, with or without spills (whose tee and
// head are in the group too).
func TestWrapperPublishesGroupSignalsUnderLoad(t *testing.T) {
	cpuHogs(t)
	sigs := []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGSEGV, syscall.SIGHUP, syscall.SIGQUIT}
	i := 0
	var mu sync.Mutex
	manyTimes(t, 40, func(t *testing.T) {
		mu.Lock()
		sig := sigs[i%len(sigs)]
		spill := NoSpill
		if i%2 == 1 {
			spill = 1 << 20
		}
		i++
		mu.Unlock()
		w := startWrapped(t, []string{"/bin/sh", "-c", "echo ready; exec sleep 100"}, spill)
		w.ready(t)
		w.signal(t, sig)
		if got := w.fact(t); got != signalFact(sig) {
			t.Errorf("group signalled %v: published %s", sig, got)
		}
	})
}

// A program that traps the signal and exits 143 (the status a SIGTERM death
// has too) is published as exit 143, not as SIGTERM.
func TestWrapperTellsExit143FromSIGTERMUnderLoad(t *testing.T) {
	cpuHogs(t)
	manyTimes(t, 30, func(t *testing.T) {
		w := startWrapped(t, []string{"/bin/sh", "-c", `trap 'exit 143' TERM; echo ready; while :; do sleep 0.05; done`}, NoSpill)
		w.ready(t)
		w.signal(t, syscall.SIGTERM)
		if got := w.fact(t); got != "exit 143" {
			t.Errorf("trapped SIGTERM, exit 143: published %s", got)
		}
	})
}

// A stopped program sent SIGTERM dies of it once continued; the wrapper
// must publish that, not 145 (the CHLD trap's status) or an exit code.
func TestWrapperPublishesSIGTERMOfAStoppedProgramOnceContinued(t *testing.T) {
	cpuHogs(t)
	manyTimes(t, 20, func(t *testing.T) {
		w := startWrapped(t, []string{"/bin/sh", "-c", "echo ready; exec sleep 100"}, 1000)
		// With a spill the program's stdout is the tee: read the spill.
		testwait.For(t, 30*time.Second, "the program to say ready", func() bool {
			return strings.Contains(readOr(filepath.Join(w.dir, StdoutSpillFile)), "ready")
		})
		w.signal(t, syscall.SIGSTOP)
		w.signal(t, syscall.SIGTERM)
		time.Sleep(20 * time.Millisecond) // let the TERM sit while stopped
		w.signal(t, syscall.SIGCONT)
		if got := w.fact(t); got != signalFact(syscall.SIGTERM) {
			t.Errorf("STOP, TERM, CONT: published %s", got)
		}
	})
}

// Deaths the program brings on itself, including core-dumping signals,
// and plain exit codes in the signal range.
func TestWrapperPublishesSelfInflictedEnds(t *testing.T) {
	cpuHogs(t)
	cases := []struct{ script, want string }{
		{"kill -SEGV $$", signalFact(syscall.SIGSEGV)},
		{"kill -ABRT $$", signalFact(syscall.SIGABRT)},
		{"kill -QUIT $$", signalFact(syscall.SIGQUIT)},
		{"kill -KILL $$", signalFact(syscall.SIGKILL)},
		{"kill -TERM $$", signalFact(syscall.SIGTERM)},
		{"exit 137", "exit 137"},
		{"exit 139", "exit 139"},
		{"exit 145", "exit 145"},
		{"exit 0", "exit 0"},
	}
	var mu sync.Mutex
	i := 0
	manyTimes(t, 3*len(cases), func(t *testing.T) {
		mu.Lock()
		c := cases[i%len(cases)]
		i++
		mu.Unlock()
		w := startWrapped(t, []string{"/bin/sh", "-c", "ulimit -c 0; " + c.script}, 100)
		if got := w.fact(t); got != c.want {
			t.Errorf("%s: published %s, want %s", c.script, got, c.want)
		}
	})
}

// The spill's head ends early (its cap is reached) and a tee can be killed
// outright: neither death is the program's, which is published as its own.
func TestWrapperIgnoresTheDeathOfItsTeeAndHead(t *testing.T) {
	cpuHogs(t)
	manyTimes(t, 10, func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		w := startWrapped(t, []string{"/bin/sh", "-c", `trap "exit 7" TERM; i=0; while [ $i -lt 200 ]; do echo 0123456789abcdef; i=$((i+1)); done; : >"$1"; while :; do sleep 0.05; done`, "sh", ready}, 64)
		// Once the program has written past the cap (so the head is gone)
		// and writes no more, kill the tee too.
		testwait.For(t, 30*time.Second, "the program to get ready", func() bool { return fileExists(ready) })
		var tee int
		testwait.For(t, 30*time.Second, "a tee in the group", func() bool { tee = memberNamed(w.pgid, "tee"); return tee > 0 })
		_ = syscall.Kill(tee, syscall.SIGKILL)
		time.Sleep(50 * time.Millisecond)
		w.signal(t, syscall.SIGTERM)
		if got := w.fact(t); got != "exit 7" {
			t.Errorf("tee killed, then TERM trapped as exit 7: published %s", got)
		}
	})
}

// memberNamed finds a process of group pgid whose command name is comm.
func memberNamed(pgid int, comm string) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(stat)
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != comm {
			continue
		}
		f := strings.Fields(s[close+1:])
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			return pid
		}
	}
	return 0
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// sessionTable shows what a hung wrapper's session still runs (state,
// wait channel, blocked/ignored/caught signals), for the failure message.
func sessionTable(sid int) string {
	var b strings.Builder
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if s, err := unix.Getsid(pid); err != nil || s != sid {
			continue
		}
		stat := readOr(fmt.Sprintf("/proc/%d/stat", pid))
		wchan := readOr(fmt.Sprintf("/proc/%d/wchan", pid))
		var sigs []string
		for _, l := range strings.Split(readOr(fmt.Sprintf("/proc/%d/status", pid)), "\n") {
			if strings.HasPrefix(l, "Sig") {
				sigs = append(sigs, strings.ReplaceAll(l, "\t", ""))
			}
		}
		fmt.Fprintf(&b, "%s wchan=%s %s\n", strings.TrimSpace(stat[:min(len(stat), 60)]), wchan, strings.Join(sigs, " "))
	}
	return b.String()
}

// The wrapper blocks in `wait` on its sentinel. If the sentinel dies (a
// hung CI run showed a wrapper spinning at full CPU with its child a
// zombie and no sentinel left; another published a trapped "exit 143" as
// SIGTERM), bash answers that wait at once, for ever: the wrapper must not
// spin, and must still tell the program's exit code from a signal.
func TestWrapperSurvivesTheDeathOfItsSentinel(t *testing.T) {
	w := startWrapped(t, []string{"/bin/sh", "-c", `trap "exit 143" TERM; echo ready; while :; do sleep 0.05; done`}, NoSpill)
	w.ready(t)
	sentinel := testwait.Value(t, 10*time.Second, func() (int, error) {
		for _, pid := range membersNamed(w.pgid, "bash") {
			if pid != w.pgid {
				return pid, nil
			}
		}
		return 0, fmt.Errorf("no sentinel in group %d:\n%s", w.pgid, sessionTable(w.pgid))
	})
	if err := syscall.Kill(sentinel, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	before := cpuTicks(t, w.pgid)
	time.Sleep(time.Second)
	if used := cpuTicks(t, w.pgid) - before; used > 3 {
		t.Errorf("with its sentinel gone the wrapper used %d clock ticks of CPU in a second (it spins)", used)
	}
	w.signal(t, syscall.SIGTERM)
	if got := w.fact(t); got != "exit 143" {
		t.Errorf("sentinel killed, then TERM trapped as exit 143: published %s", got)
	}
}

// membersNamed lists the processes of group pgid whose command name is comm.
func membersNamed(pgid int, comm string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		s := readOr(filepath.Join("/proc", e.Name(), "stat"))
		open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || close < open || s[open+1:close] != comm {
			continue
		}
		if f := strings.Fields(s[close+1:]); len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// cpuTicks is the user plus system time of pid, in clock ticks.
func cpuTicks(t *testing.T, pid int) int {
	t.Helper()
	s := readOr(fmt.Sprintf("/proc/%d/stat", pid))
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		t.Fatalf("stat of %d: %q", pid, s)
	}
	u, _ := strconv.Atoi(f[11])
	k, _ := strconv.Atoi(f[12])
	return u + k
}
