package testreap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

func TestMain(m *testing.M) {
	Warden()
	os.Exit(m.Run())
}

// The helper's environment: what it does, and where it writes the pid of
// the sleep it leaves behind.
const (
	modeEnv    = "TESTREAP_HELPER"
	pidFileEnv = "TESTREAP_PIDFILE"
)

// TestHelper is not a test: the tests below run this binary again, as go
// test would, with -test.run=^TestHelper$, and this leaves a sleep behind
// and then hangs until -test.timeout panics, exits or passes.
func TestHelper(t *testing.T) {
	mode := os.Getenv(modeEnv)
	if mode == "" {
		t.Skip("run by the other tests")
	}
	if os.Getenv(childEnv) == "" {
		t.Fatal("the helper runs outside a warden")
	}
	var pid int
	switch mode {
	case "pass":
		t.Log("passing")
		return
	case "exit":
		// A plain child, orphaned when this process exits.
		sleep := exec.Command("sleep", "300")
		if err := sleep.Start(); err != nil {
			t.Fatal(err)
		}
		pid = sleep.Process.Pid
	default:
		pid = daemonizedSleep(t)
	}
	tmp := os.Getenv(pidFileEnv) + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(pid)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, os.Getenv(pidFileEnv)); err != nil {
		t.Fatal(err)
	}
	switch mode {
	case "exit":
		fmt.Println("helper stdout")
		fmt.Fprintln(os.Stderr, "helper stderr")
		os.Exit(7)
	case "signal":
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
	}
	// Blocks until -test.timeout or a signal ends this binary.
	time.Sleep(time.Hour)
}

// daemonizedSleep double-forks a sleep into a session of its own, as a
// daemon does, and returns its pid once it is re-parented to the warden.
func daemonizedSleep(t *testing.T) int {
	out, err := exec.Command("sh", "-c", "setsid sleep 300 </dev/null >/dev/null 2>&1 & echo $!").Output()
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	warden, _ := strconv.Atoi(os.Getenv(childEnv))
	testwait.NoError(t, 10*time.Second, func() error {
		p, ok := stat(pid)
		if !ok || p.ppid != warden || p.pgid != pid {
			return fmt.Errorf("sleep %d is %+v, want a group leader whose parent is the warden %d", pid, p, warden)
		}
		return nil
	})
	return pid
}

func stat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	return parseStat(pid, string(b))
}

// run is a test binary started as go test starts it, running the helper.
type run struct {
	cmd            *exec.Cmd
	stdout, stderr bytes.Buffer
	pidFile        string
	done           chan error
}

func startHelper(t *testing.T, mode string, args ...string) *run {
	r := &run{pidFile: filepath.Join(t.TempDir(), "pid"), done: make(chan error, 1)}
	r.cmd = exec.Command(os.Args[0], append([]string{"-test.run=^TestHelper$"}, args...)...)
	// Without this test binary's own warden mark (or an opt-out), the run
	// gets a warden.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, childEnv+"=") && !strings.HasPrefix(kv, offEnv+"=") {
			r.cmd.Env = append(r.cmd.Env, kv)
		}
	}
	r.cmd.Env = append(r.cmd.Env, modeEnv+"="+mode, pidFileEnv+"="+r.pidFile)
	r.cmd.Stdout, r.cmd.Stderr = &r.stdout, &r.stderr
	r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.done <- r.cmd.Wait() }()
	t.Cleanup(func() {
		_ = r.cmd.Process.Kill()
		<-r.done
		// The sleep, should the warden have failed to kill it.
		if pid, err := r.sleepPid(); err == nil && isSleep(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return r
}

// wait returns the run's exit code once it ends.
func (r *run) wait(t *testing.T) int {
	t.Helper()
	var err error
	testwait.For(t, 60*time.Second, "the helper run to end", func() bool {
		select {
		case err = <-r.done:
			r.done <- err // for the clean-up
			return true
		default:
			return false
		}
	})
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	t.Logf("exit %v\nstdout:\n%s\nstderr:\n%s", err, &r.stdout, &r.stderr)
	return r.cmd.ProcessState.ExitCode()
}

func (r *run) sleepPid() (int, error) {
	b, err := os.ReadFile(r.pidFile)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(b))
}

// isSleep says whether pid is still a live sleep 300 (and not a reused pid).
func isSleep(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if p, ok := stat(pid); err != nil || !ok || p.zombie {
		return false
	}
	return string(b) == "sleep\x00300\x00"
}

// assertGone checks the run left its sleep and named it as killed.
func (r *run) assertGone(t *testing.T) {
	t.Helper()
	pid, err := r.sleepPid()
	if err != nil {
		t.Fatalf("the helper wrote no pid: %v", err)
	}
	testwait.For(t, 5*time.Second, fmt.Sprintf("sleep %d to be gone", pid), func() bool { return !isSleep(pid) })
	if want := fmt.Sprintf("sleep[%d]", pid); !strings.Contains(r.stderr.String(), want) {
		t.Errorf("stderr does not name %s as killed", want)
	}
}

func TestReapAfterTimeout(t *testing.T) {
	t.Parallel()
	r := startHelper(t, "hang", "-test.timeout=2s")
	if code := r.wait(t); code != 2 {
		t.Errorf("exit code %d, want 2 (the timeout's panic)", code)
	}
	if !strings.Contains(r.stderr.String()+r.stdout.String(), "panic: test timed out after 2s") {
		t.Error("no timeout panic in the output")
	}
	r.assertGone(t)
}

func TestReapAfterExit(t *testing.T) {
	t.Parallel()
	r := startHelper(t, "exit", "-test.v")
	if code := r.wait(t); code != 7 {
		t.Errorf("exit code %d, want the child's 7", code)
	}
	// Each stream reaches its own file.
	if !strings.Contains(r.stdout.String(), "helper stdout") || strings.Contains(r.stdout.String(), "helper stderr") {
		t.Error("stdout does not hold exactly the helper's stdout line")
	}
	if !strings.Contains(r.stderr.String(), "helper stderr") {
		t.Error("stderr does not hold the helper's stderr line")
	}
	r.assertGone(t)
}

func TestReapForwardsSignals(t *testing.T) {
	t.Parallel()
	r := startHelper(t, "hang")
	testwait.For(t, 30*time.Second, "the helper's pid file", func() bool {
		_, err := r.sleepPid()
		return err == nil
	})
	// To the warden, which passes it on; the test binary dies of it.
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if code := r.wait(t); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit code %d, want 128+SIGTERM", code)
	}
	r.assertGone(t)
}

func TestReapAfterChildKilled(t *testing.T) {
	t.Parallel()
	r := startHelper(t, "signal")
	if code := r.wait(t); code != 128+int(syscall.SIGKILL) {
		t.Errorf("exit code %d, want 128+SIGKILL", code)
	}
	r.assertGone(t)
}

func TestReapPassingRun(t *testing.T) {
	t.Parallel()
	r := startHelper(t, "pass", "-test.v")
	if code := r.wait(t); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if !strings.Contains(r.stdout.String(), "--- PASS: TestHelper") {
		t.Error("no PASS line on stdout")
	}
	if strings.Contains(r.stderr.String(), "testreap:") {
		t.Error("the warden reported processes after a run that left none")
	}
}

func TestParseStat(t *testing.T) {
	p, ok := parseStat(42, "42 (a (b) c) Z 7 9 9 0 -1")
	if !ok || p != (proc{pid: 42, ppid: 7, pgid: 9, comm: "a (b) c", zombie: true}) {
		t.Fatalf("parsed %+v %v", p, ok)
	}
}
