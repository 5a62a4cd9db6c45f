package ui

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
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

	// Start a process and see it listed. Its argument is this binary's
	// own, so that no other run on the machine shares it.
	sleep := fmt.Sprintf("sleep %d", 100000+os.Getpid())
	t.Cleanup(func() { killByCmdline(t, strings.ReplaceAll(sleep, " ", "\x00")) })
	tm.keys(":")
	tm.text("run " + sleep)
	tm.keys("Enter")
	tm.wait("the process listed", sleep)

	// Open a terminal (it attaches at once), wait for the shell's prompt,
	// type, see the echo, detach. Keys typed before the prompt would reach
	// a shell still reading its startup files.
	tm.keys("t", "Enter")
	tm.wait("attached", "attached to terminal")
	tm.wait("the shell's prompt", shellPrompt)
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
	tm.teardownSelected(tm.runStubborn(e.stubborn("main")))

	// Quit: remote work keeps running.
	tm.quit()
	if len(pidsByCmdline(strings.ReplaceAll(sleep, " ", "\x00"))) == 0 {
		t.Fatalf("quitting the TUI stopped `%s`", sleep)
	}
	if len(pidsByCmdline(e.stubborn("main")+"\x00")) != 0 {
		t.Fatalf("the torn-down group is still alive")
	}
}

// e2e is one end-to-end run: a temp dir, the daemons it started and a
// tmux server; all of it goes at cleanup. The tests run in parallel, each
// with its own dir, home, daemons, tmux server and process names.
type e2e struct {
	t         *testing.T
	dir       string
	bin       string
	env       []string
	stubborns []string
	tuis      int
}

// shellPrompt is the prompt of the shells the tests' terminals start: the
// home the tests give them holds a .bashrc that sets it and nothing else,
// so a shell is ready as soon as it shows.
const shellPrompt = "e2e-ready> "

func newE2E(t *testing.T) *e2e {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatalf("tmux is required for the end-to-end test (CI installs it): %v", err)
	}
	t.Parallel()
	bin, err := sandtopBinary()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sandtop-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	e := &e2e{t: t, dir: dir, bin: bin}
	// A private config (short grace), private local-sandbox dirs and a
	// private home: the run never touches the operator's own sandbox or
	// settings, and a terminal's shell does not read the operator's
	// startup files (which may take any time: one that waits on a lock
	// held elsewhere kept a shell from its prompt for a minute).
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("grace = \"1s\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte("PS1='"+shellPrompt+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	e.env = []string{
		"HOME=" + home,
		"SANDTOP_CONFIG=" + cfg,
		"SANDTOP_RUNTIME_DIR=" + filepath.Join(dir, "run"),
		"SANDTOP_STATE_DIR=" + filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME=" + filepath.Join(dir, "xdg"),
	}
	t.Cleanup(func() {
		for _, s := range e.stubborns {
			killByCmdline(t, s)
		}
	})
	return e
}

// sandtopBinary is the sandtop binary, built once for every end-to-end
// test of this run into buildDir. `go build -o` links anew every time
// (seconds on a loaded machine); `go run` keeps the linked binary in the
// build cache, and with -exec cp what it runs is a copy of it to buildDir.
var sandtopBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "sandtop-e2e-bin-")
	if err != nil {
		return "", err
	}
	buildDir.Lock()
	buildDir.path = dir
	buildDir.Unlock()
	bin := filepath.Join(dir, "sandtop")
	cmd := exec.Command("go", "run", "-exec", "cp", "sandtop", bin)
	dieWithTest(cmd, syscall.SIGKILL)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go run -exec cp sandtop: %v\n%s", err, b)
	}
	return bin, nil
})

// buildDir is where sandtopBinary built, if it did; TestMain removes it.
var buildDir struct {
	sync.Mutex
	path string
}

// dieWithTest has cmd's process get sig when this test binary dies, be it
// killed by go test's timeout.
func dieWithTest(cmd *exec.Cmd, sig syscall.Signal) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
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
	dieWithTest(cmd, syscall.SIGTERM) // --kill-on-exit ends its groups
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
	testwait.NoError(t, 15*time.Second, func() error {
		_, err := os.Stat(sock)
		return err
	})
	return sock
}

// tui runs the built binary with args in a new tmux server of 160x50,
// from e.dir.
func (e *e2e) tui(session string, args ...string) *tmux {
	return e.tuiSized(session, 160, 50, args...)
}

// tuiSized is tui in a window of w×h. Each has a tmux server of its own.
func (e *e2e) tuiSized(session string, w, h int, args ...string) *tmux {
	e.t.Helper()
	e.tuis++
	line := "env"
	for _, kv := range e.env {
		line += " " + shellQuote(kv)
	}
	line += " " + shellQuote(e.bin)
	for _, a := range args {
		line += " " + shellQuote(a)
	}
	server := fmt.Sprintf("sandtop-%s-%d-%d", session, os.Getpid(), e.tuis)
	return startTmux(e.t, server, session, e.dir, w, h, line)
}

// sandtop runs the binary as a CLI command and returns its stdout.
func (e *e2e) sandtop(args ...string) string {
	e.t.Helper()
	cmd := exec.Command(e.bin, args...)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), e.env...)
	dieWithTest(cmd, syscall.SIGKILL)
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
	pgid := testwait.Value(x.t, 20*time.Second, func() (int, error) {
		for _, pid := range pidsByCmdline(comm) {
			if g, err := syscall.Getpgid(pid); err == nil {
				return g, nil
			}
		}
		return 0, errors.New("no process named " + comm)
	})
	x.keys("/")
	x.text(comm)
	x.keys("Enter")
	x.wait("the filter applied", "· filter "+comm)
	// G moves to the last row, which after the filter is the group's. A
	// key can reach the list before the filtered rows do, so the test
	// presses it again until the detail pane names this very pgid.
	want := fmt.Sprintf("Output · pgid %d ", pgid)
	testwait.NoError(x.t, 20*time.Second, func() error {
		s := x.screen()
		if strings.Contains(s, want) {
			return nil
		}
		x.keys("G")
		return fmt.Errorf("the stubborn group selected; last screen:\n%s", s)
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

// stubborn names a TERM-ignoring process of this test (its argv[0]), to
// be killed at cleanup. The pid keeps another test run on the machine from
// matching, or having its cleanup kill, ours; name tells this run's tests
// apart.
func (e *e2e) stubborn(name string) string {
	s := fmt.Sprintf("e2e-stubborn-%d-%s", os.Getpid(), name)
	if !slices.Contains(e.stubborns, s) {
		e.stubborns = append(e.stubborns, s)
	}
	return s
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
