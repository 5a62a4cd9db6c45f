package ui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestEndToEndInTmux builds the binaries, starts a real daemon with
// `sandtop serve`, runs the TUI in a detached tmux session of 160×50 and
// drives it with send-keys, reading the screen with capture-pane.
//
// The TUI binary is ui/internal/e2emain, which wires NewBackendSource the
// way main.go's TUI command is meant to; the daemon is the real CLI binary.
func TestEndToEndInTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required for the end-to-end test (CI installs it): %v", err)
	}
	dir, err := os.MkdirTemp("", "sandtop-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	bin := filepath.Join(dir, "sandtop")
	tuiBin := filepath.Join(dir, "e2emain")
	build(t, bin, "sandtop")
	build(t, tuiBin, "sandtop/ui/internal/e2emain")

	sock := filepath.Join(dir, "d.sock")
	daemonCmd := exec.Command(bin, "serve", "--listen", "unix:"+sock, "--state-dir", filepath.Join(dir, "state"))
	daemonCmd.Stdout, daemonCmd.Stderr = os.Stderr, os.Stderr
	if err := daemonCmd.Start(); err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	t.Cleanup(func() {
		killByCmdline(t, "sleep\x004242")
		killByCmdline(t, "e2e-stubborn")
		_ = daemonCmd.Process.Signal(syscall.SIGTERM)
		_ = daemonCmd.Wait()
	})
	poll(t, "daemon socket", 15*time.Second, func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})

	tm := &tmux{t: t, server: "sandtop-e2e-" + fmt.Sprint(os.Getpid()), target: "e2e"}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.server, "kill-server").Run() })
	tm.run("new-session", "-d", "-x", "160", "-y", "50", "-s", "e2e", "-c", dir,
		fmt.Sprintf("%s --socket %s --grace 2s", tuiBin, sock))
	tm.wait("the TUI connected", "● connected")

	// Start a process and see it listed.
	tm.keys(":")
	tm.text("run sleep 4242")
	tm.keys("Enter")
	tm.wait("the process listed", "sleep 4242")

	// Open a terminal (it attaches at once), type, see the echo, detach.
	tm.keys("t", "Enter")
	tm.wait("attached", "attached to terminal")
	tm.text("echo h''i")
	tm.keys("Enter")
	tm.waitFunc("hi echoed", func(screen string) bool {
		for _, l := range strings.Split(screen, "\n") {
			if strings.Contains(l, "│hi ") {
				return true
			}
		}
		return false
	})
	tm.keys("C-]")
	tm.wait("detached", "detached from terminal")

	// Tear down a group that ignores SIGTERM: confirm, watch it escalate
	// and settle.
	tm.keys(":")
	tm.text(`run bash -c 'trap "" TERM; exec -a e2e-stubborn sleep 600'`)
	tm.keys("Enter")
	tm.keys("/")
	tm.text("stubborn")
	tm.keys("Enter")
	tm.waitFunc("the stubborn group in the tree", func(s string) bool {
		for _, l := range strings.Split(s, "\n") {
			if strings.Contains(l, "running") && strings.Contains(l, "exec -a") {
				return true
			}
		}
		return false
	})
	tm.keys("G", "j") // onto the group row, wherever the cursor was (one read: "Gj")
	tm.wait("the group selected", "Output · pgid")
	tm.keys("x")
	tm.wait("confirmation", "Tear down group?")
	tm.keys("y")
	tm.wait("SIGKILL after the grace", "SIGKILL to pgid")
	tm.wait("group empty", "empty after")

	// Quit: remote work keeps running.
	tm.keys("Escape")
	tm.waitFunc("the filter cleared", func(s string) bool { return !strings.Contains(s, "filter stubborn") })
	tm.keys("q")
	poll(t, "the TUI to exit", 10*time.Second, func() (bool, string) {
		return exec.Command("tmux", "-L", tm.server, "has-session", "-t", "e2e").Run() != nil, "still running"
	})
	if len(pidsByCmdline("sleep\x004242")) == 0 {
		t.Fatalf("quitting the TUI stopped `sleep 4242`")
	}
	if len(pidsByCmdline("e2e-stubborn")) != 0 {
		t.Fatalf("the torn-down group is still alive")
	}
}

func build(t *testing.T, out, pkg string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
}

type tmux struct {
	t              *testing.T
	server, target string
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-L", x.server}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (x *tmux) keys(keys ...string) { x.run(append([]string{"send-keys", "-t", x.target}, keys...)...) }

func (x *tmux) text(s string) { x.run("send-keys", "-t", x.target, "-l", s) }

func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", x.target) }

func (x *tmux) wait(what, want string) {
	x.t.Helper()
	x.waitFunc(what, func(s string) bool { return strings.Contains(s, want) })
}

func (x *tmux) waitFunc(what string, ok func(string) bool) {
	x.t.Helper()
	poll(x.t, what, 20*time.Second, func() (bool, string) {
		s := x.screen()
		return ok(s), s
	})
}

// poll checks cond every 50 ms until it holds or the deadline passes.
func poll(t *testing.T, what string, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, state := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last state:\n%s", what, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// pidsByCmdline finds processes whose NUL-separated cmdline contains s.
func pidsByCmdline(s string) []int {
	var pids []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err != nil || !bytes.Contains(b, []byte(s)) {
			continue
		}
		var pid int
		fmt.Sscan(filepath.Base(d), &pid)
		if pid != os.Getpid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killByCmdline(t *testing.T, s string) {
	for _, pid := range pidsByCmdline(s) {
		if pgid, err := syscall.Getpgid(pid); err == nil && pgid > 1 {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
		}
	}
}
