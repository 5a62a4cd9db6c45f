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

// TestEndToEndInTmux builds the real sandtop binary, starts a daemon with
// `sandtop serve`, runs `sandtop --socket PATH` (the TUI) in a detached
// tmux session of 160×50 and drives it with send-keys, reading the screen
// with capture-pane.
func TestEndToEndInTmux(t *testing.T) {
	e := newE2E(t)
	e.serve("d.sock")
	tm := e.tui("e2e", "--socket", "d.sock")
	tm.wait("the TUI connected", "● connected")
	tm.wait("the sandbox named in the header", "socket:d.sock")

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
	tm.teardownSelected(tm.runStubborn(stubborn("main")))

	// Quit: remote work keeps running.
	tm.quit()
	if len(pidsByCmdline("sleep\x004242")) == 0 {
		t.Fatalf("quitting the TUI stopped `sleep 4242`")
	}
	if len(pidsByCmdline(stubborn("main")+"\x00")) != 0 {
		t.Fatalf("the torn-down group is still alive")
	}
}

// e2e is one end-to-end run: a temp dir with the built binary, the
// daemons it started and a tmux server; all of it goes at cleanup.
type e2e struct {
	t   *testing.T
	dir string
	bin string
	env []string
}

func newE2E(t *testing.T) *e2e {
	t.Helper()
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
	e := &e2e{t: t, dir: dir, bin: filepath.Join(dir, "sandtop")}
	build(t, e.bin, "sandtop")
	// A private config (short grace) and private local-sandbox dirs: the
	// run never touches the operator's own sandbox or settings.
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("grace = \"2s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.env = []string{
		"SANDTOP_CONFIG=" + cfg,
		"SANDTOP_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"SANDTOP_STATE_DIR=" + filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"),
	}
	t.Cleanup(func() {
		killByCmdline(t, "sleep\x004242")
		killByCmdline(t, stubborn(""))
	})
	return e
}

// serve starts `sandtop serve` on dir/name and waits for its socket. It
// is stopped with SIGTERM at cleanup (--kill-on-exit ends its groups).
func (e *e2e) serve(name string) string {
	t := e.t
	t.Helper()
	sock := filepath.Join(e.dir, name)
	cmd := exec.Command(e.bin, "serve", "--listen", "unix:"+sock, "--state-dir", filepath.Join(e.dir, "state-"+name), "--kill-on-exit")
	cmd.Env = append(os.Environ(), e.env...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start daemon: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	poll(t, "daemon socket "+name, 15*time.Second, func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})
	return sock
}

// tui runs the built binary with args in a new tmux server of 160x50,
// from e.dir.
func (e *e2e) tui(session string, args ...string) *tmux {
	return e.tuiSized(session, 160, 50, args...)
}

// tuiSized is tui in a window of w×h.
func (e *e2e) tuiSized(session string, w, h int, args ...string) *tmux {
	t := e.t
	t.Helper()
	tm := &tmux{t: t, server: fmt.Sprintf("sandtop-%s-%d", session, os.Getpid()), target: session}
	t.Cleanup(func() { _ = exec.Command("tmux", "-L", tm.server, "kill-server").Run() })
	line := "env"
	for _, kv := range e.env {
		line += " " + shellQuote(kv)
	}
	line += " " + shellQuote(e.bin)
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	tm.run("new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", session, "-c", e.dir, line)
	return tm
}

// sandtop runs the binary as a CLI command and returns its stdout.
func (e *e2e) sandtop(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), e.env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		e.t.Fatalf("sandtop %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// runStubborn starts a group that ignores SIGTERM under the name comm,
// filters the tree down to it and selects its row. It returns the group's
// pgid, read from /proc, so the test can tell its row from any other.
func (x *tmux) runStubborn(comm string) int {
	x.t.Helper()
	x.keys(":")
	x.text(`run bash -c 'trap "" TERM; exec -a ` + comm + ` sleep 600'`)
	x.keys("Enter")
	var pgid int
	poll(x.t, "the stubborn process to start", 20*time.Second, func() (bool, string) {
		for _, pid := range pidsByCmdline(comm) {
			if g, err := syscall.Getpgid(pid); err == nil {
				pgid = g
				return true, ""
			}
		}
		return false, "no process named " + comm
	})
	x.keys("/")
	x.text(comm)
	x.keys("Enter")
	x.wait("the filter applied", "· filter "+comm)
	// G moves to the last row, which after the filter is the group's. A
	// key can reach the list before the filtered rows do, so the test
	// presses it again until the detail pane names this very pgid.
	want := fmt.Sprintf("Output · pgid %d ", pgid)
	poll(x.t, "the stubborn group selected", 20*time.Second, func() (bool, string) {
		s := x.screen()
		if strings.Contains(s, want) {
			return true, s
		}
		x.keys("G")
		return false, s
	})
	return pgid
}

// teardownSelected tears the selected group down after confirming (the
// dialog must name pgid) and waits for it to settle (SIGKILL after the
// grace, then empty).
func (x *tmux) teardownSelected(pgid int) {
	x.t.Helper()
	x.keys("x")
	x.wait("confirmation", "Tear down group?")
	x.wait("the confirmation naming the stubborn group", fmt.Sprintf("pgid %d: ", pgid))
	x.keys("y")
	x.wait("SIGKILL after the grace", "SIGKILL to pgid")
	x.wait("group empty", "empty after")
	x.keys("Escape")
	x.waitFunc("the filter cleared", func(s string) bool { return !strings.Contains(s, "· filter ") })
}

// quit leaves the TUI and waits for it to exit.
func (x *tmux) quit() {
	x.t.Helper()
	x.keys("q")
	poll(x.t, "the TUI to exit", 10*time.Second, func() (bool, string) {
		return exec.Command("tmux", "-L", x.server, "has-session", "-t", x.target).Run() != nil, "still running"
	})
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

// stubborn names a TERM-ignoring process of this test binary (its argv[0]).
// The pid keeps another test run on the machine from matching, or having
// its cleanup kill, ours.
func stubborn(name string) string {
	return fmt.Sprintf("e2e-stubborn-%d-%s", os.Getpid(), name)
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
