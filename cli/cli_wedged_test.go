package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// A command lets its first call to the local daemon stand in for the
// health probe. A daemon that accepts but never answers (here: stopped)
// must still be found out and replaced, and the command still work.
func TestRunReplacesAWedgedLocalDaemon(t *testing.T) {
	t.Parallel()
	s := newRestartSandbox(t)
	s.run("first", "true")
	old := s.daemonPid()
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(old, syscall.SIGKILL) })
	// kill(2) returns before every thread has stopped.
	testwait.For(t, 10*time.Second, "every thread of the daemon to stop", func() bool { return threadsStopped(old) })
	start := time.Now()
	r := sandtopEnv(t, s.env, "run", "--", "true")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "pid ") {
		t.Fatalf("run with a wedged daemon: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if now := s.daemonPid(); now == old {
		t.Fatalf("the wedged daemon %d was kept", old)
	}
	t.Logf("replaced the wedged daemon in %v", time.Since(start).Round(time.Millisecond))
}

// threadsStopped reports whether every thread of pid is stopped ("T").
func threadsStopped(pid int) bool {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			return false
		}
		st := string(b)
		if f := strings.Fields(st[strings.LastIndexByte(st, ')')+1:]); len(f) == 0 || f[0] != "T" {
			return false
		}
	}
	return true
}
