package local

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sandtop/testreap"
)

// sandtopBin is the real sandtop binary, built once: the daemon these tests
// start is a re-exec of it as "sandtop serve".
var sandtopBin string

func TestMain(m *testing.M) {
	// Before the build, which the warden's child does once.
	testreap.Warden()
	dir, err := os.MkdirTemp("", "sandtop-local-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sandtopBin = filepath.Join(dir, "sandtop")
	build := exec.Command("go", "build", "-o", sandtopBin, "sandtop")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building sandtop for the lifecycle tests:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// isolatedPaths gives a test its own runtime and state directories, short
// enough for a unix socket path, and stops any daemon left there at the
// end of the test.
func isolatedPaths(t *testing.T) Paths {
	t.Helper()
	dir, err := os.MkdirTemp("", "st-")
	if err != nil {
		t.Fatal(err)
	}
	p := Paths{RuntimeDir: filepath.Join(dir, "run"), StateDir: filepath.Join(dir, "state")}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if h := Probe(ctx, p.Socket()); h.PID > 0 {
			_ = syscall.Kill(h.PID, syscall.SIGKILL)
			waitGone(ctx, h.PID, 5*time.Second)
		}
		if t.Failed() {
			if b, err := os.ReadFile(p.LogFile()); err == nil {
				t.Logf("daemon log:\n%s", b)
			}
		}
		os.RemoveAll(dir)
	})
	return p
}

func testOptions(p Paths) Options {
	return Options{Paths: p, Executable: sandtopBin, StartTimeout: 30 * time.Second}
}

// allThreadsStopped reports whether every thread of pid is in the stopped
// state ("T" in /proc/<pid>/task/<tid>/stat).
func allThreadsStopped(pid int) bool {
	tasks, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil || len(tasks) == 0 {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, task.Name()))
		if err != nil {
			return false
		}
		// The state follows the ")" that closes the command name.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) || b[i+2] != 'T' {
			return false
		}
	}
	return true
}
