package wrapper

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

type localRun struct {
	// stderr is the program's: what follows the published line there.
	stdout, stderr []byte
	state          *os.ProcessState
	dir            string
}

// runLocally starts the wrapper the way a daemon would, with real bash, and
// waits for it (bounded).
func runLocally(t *testing.T, inv Invocation, env []string, stdinRest string) localRun {
	t.Helper()
	if inv.StateDir == "" {
		inv.StateDir = StateDir(t.TempDir(), "p1")
	}
	cmd, args, err := inv.Command("/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := EnvironmentPayload(env)
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(cmd, args...)
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	c.Stdin = strings.NewReader(string(payload) + stdinRest)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	// Dies with the test binary, even when go test's timeout kills it.
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true} // like sandtop's daemon
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = c.Process.Kill()
		t.Fatal("wrapper did not finish")
	}
	stderr := errb.Bytes()
	if noise, rest, ok := CutPublished(stderr); ok {
		if len(noise) > 0 {
			t.Errorf("the wrapper wrote %q to stderr before its line", noise)
		}
		stderr = rest
	}
	return localRun{out.Bytes(), stderr, c.ProcessState, inv.StateDir}
}

func (r localRun) file(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func (r localRun) body(t *testing.T) string {
	t.Helper()
	line, rest, ok := strings.Cut(string(r.stdout), "\n")
	if !ok {
		t.Fatalf("no published line in stdout %q (stderr %q)", r.stdout, r.stderr)
	}
	if _, err := ParsePublishedLine(line); err != nil {
		t.Fatal(err)
	}
	return rest
}

func TestWrapperRoundTripsArgvAndEnv(t *testing.T) {
	argv := []string{"/bin/bash", "-c", `printf '%s\0' "$@"; printf 'V=%s\0' "$V"`, "x", "\xff\xfe", "it's", "$HOME", "a\nb", ""}
	env := []string{"V=va=l\xffue\nline", "PATH=" + os.Getenv("PATH")}
	r := runLocally(t, Invocation{Argv: argv, Stdin: StdinIgnore, StdoutSpill: NoSpill, StderrSpill: NoSpill}, env, "")
	want := strings.Join(argv[4:], "\x00") + "\x00V=va=l\xffue\nline\x00"
	if got := r.body(t); got != want {
		t.Fatalf("child saw %q, want %q", got, want)
	}
	if r.state.ExitCode() != 0 {
		t.Fatalf("exit %v, stderr %q", r.state, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(r.dir, EnvironmentFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("environment file still present: %v", err)
	}
	if got := r.file(t, ExitCodeFile); got != "0\n" {
		t.Fatalf("exit-code file %q", got)
	}
}

func TestWrapperPublishesItsGroupAndPrivateState(t *testing.T) {
	r := runLocally(t, Invocation{Argv: []string{"/bin/sh", "-c", "ps -o pgid= -o sid= -p $$"}, StdoutSpill: 10, StderrSpill: NoSpill}, []string{"PATH=" + os.Getenv("PATH")}, "")
	pgid, err := ParsePgid(r.file(t, PidFile))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(r.body(t))
	if len(fields) != 2 || fields[0] != fields[1] || fields[0] != itoa(pgid) {
		t.Fatalf("child group/session %q, published pgid %d", fields, pgid)
	}
	for name, want := range map[string]os.FileMode{".": 0o700, PidFile: 0o600, ExitCodeFile: 0o600, StdoutSpillFile: 0o600} {
		st, err := os.Stat(filepath.Join(r.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", name, st.Mode().Perm(), want)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, ".jobs")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("job notice file left behind: %v", err)
	}
}

func TestWrapperReportsSignalsAndExitCodesApart(t *testing.T) {
	cases := []struct {
		script string
		code   int
		sig    syscall.Signal
	}{
		{"exit 0", 0, 0},
		{"exit 143", 143, 0},
		{"kill -TERM $$", 143, syscall.SIGTERM},
		{"kill -INT $$", 130, syscall.SIGINT},
		{"kill -KILL $$", 137, syscall.SIGKILL},
		{"kill -SEGV $$", 139, syscall.SIGSEGV},
	}
	for _, c := range cases {
		r := runLocally(t, Invocation{Argv: []string{"/bin/sh", "-c", c.script}, StdoutSpill: NoSpill, StderrSpill: NoSpill}, []string{"PATH=" + os.Getenv("PATH")}, "")
		if got := r.file(t, ExitCodeFile); got != itoa(c.code)+"\n" {
			t.Errorf("%s: exit-code %q", c.script, got)
		}
		ws := r.state.Sys().(syscall.WaitStatus)
		if c.sig != 0 {
			if !ws.Signaled() || ws.Signal() != c.sig {
				t.Errorf("%s: wrapper wait status %v, want signal %v", c.script, r.state, c.sig)
			}
			if got := r.file(t, SignalFile); got != itoa(int(c.sig))+"\n" {
				t.Errorf("%s: signal file %q", c.script, got)
			}
		} else if ws.Signaled() || ws.ExitStatus() != c.code {
			t.Errorf("%s: wrapper wait status %v, want exit %d", c.script, r.state, c.code)
		}
		if len(r.stderr) != 0 {
			t.Errorf("%s: the wrapper wrote %q to the program's stderr", c.script, r.stderr)
		}
	}
}

func TestWrapperCapsSpills(t *testing.T) {
	inv := Invocation{Argv: []string{"/bin/sh", "-c", "printf 0123456789; printf abcdef >&2"}, StdoutSpill: 4, StderrSpill: 100}
	r := runLocally(t, inv, []string{"PATH=" + os.Getenv("PATH")}, "")
	if got := r.body(t); got != "0123456789" {
		t.Fatalf("stdout %q", got)
	}
	if string(r.stderr) != "abcdef" {
		t.Fatalf("stderr %q", r.stderr)
	}
	if got := r.file(t, StdoutSpillFile); got != "0123" {
		t.Fatalf("capped spill %q", got)
	}
	if got := r.file(t, StderrSpillFile); got != "abcdef" {
		t.Fatalf("stderr spill %q", got)
	}
}

func TestWrapperForwardsStdinAndResetsSigint(t *testing.T) {
	inv := Invocation{Argv: []string{"/bin/sh", "-c", `cat; trap -- - INT 2>/dev/null; kill -INT $$; echo survived`}, Stdin: StdinForward, StdoutSpill: NoSpill, StderrSpill: NoSpill}
	r := runLocally(t, inv, []string{"PATH=" + os.Getenv("PATH")}, "hello\x00\xff")
	if got := r.body(t); got != "hello\x00\xff" {
		t.Fatalf("stdout %q: SIGINT was ignored or stdin lost", got)
	}
	if r.file(t, SignalFile) != "2\n" {
		t.Fatal("SIGINT death not published")
	}
}

func TestWrapperRunsProgramNamesWithEquals(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "a=b")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\necho ran \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	r := runLocally(t, Invocation{Argv: []string{prog, "x"}, StdoutSpill: NoSpill, StderrSpill: NoSpill}, []string{"PATH=" + os.Getenv("PATH")}, "")
	if got := r.body(t); got != "ran x\n" {
		t.Fatalf("stdout %q stderr %q", got, r.stderr)
	}
}

func TestInvocationRejectsBadInput(t *testing.T) {
	for _, inv := range []Invocation{
		{StateDir: "rel", Argv: []string{"x"}},
		{StateDir: "/s", Argv: nil},
		{StateDir: "/s", Argv: []string{""}},
		{StateDir: "/s", Argv: []string{"x", "a\x00b"}},
		{StateDir: "/s", Argv: []string{"x"}, StdoutSpill: -2},
	} {
		if _, _, err := inv.Command("/bin/bash"); err == nil {
			t.Errorf("%+v accepted", inv)
		}
	}
}

func TestParsePublished(t *testing.T) {
	for in, ok := range map[string]bool{"42\n": true, "1": false, "0": false, "042": false, "-5": false, "x": false, "": false, "99999999999": false} {
		if _, err := ParsePgid(in); (err == nil) != ok {
			t.Errorf("ParsePgid(%q) err=%v", in, err)
		}
	}
	for in, ok := range map[string]bool{"0": true, "255\n": true, "256": false, "999": false, "07": false} {
		if _, err := ParseExitCode(in); (err == nil) != ok {
			t.Errorf("ParseExitCode(%q) err=%v", in, err)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestWrapperReportsItsOwnDeathBeforePublishing(t *testing.T) {
	// The inner half is the group leader: a group KILL takes it before it
	// can publish, and the outer half must still die of that signal.
	r := runLocally(t, Invocation{Argv: []string{"/bin/bash", "-c", `kill -KILL -- -$(ps -o pgid= -p $$ | tr -d " ")`}, StdoutSpill: NoSpill, StderrSpill: NoSpill}, []string{"PATH=" + os.Getenv("PATH")}, "")
	ws := r.state.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("wrapper wait status %v, want SIGKILL", r.state)
	}
}

// A program that writes a little and keeps running must find it in its
// spill file at once, not when it exits: "sandtop logs" reads that file.
func TestWrapperSpillIsWrittenWhileTheProgramRuns(t *testing.T) {
	inv := Invocation{Argv: []string{"/bin/sh", "-c", "echo live-out; echo live-err >&2; exec sleep 60"},
		StdoutSpill: 1 << 20, StderrSpill: 1 << 20, StateDir: StateDir(t.TempDir(), "p1")}
	cmd, args, err := inv.Command("/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	payload, err := EnvironmentPayload([]string{"PATH=" + os.Getenv("PATH")})
	if err != nil {
		t.Fatal(err)
	}
	c := exec.Command(cmd, args...)
	c.Env = []string{"PATH=" + os.Getenv("PATH")}
	c.Stdin = bytes.NewReader(payload)
	// Dies with the test binary, even when go test's timeout kills it.
	c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if b, err := os.ReadFile(filepath.Join(inv.StateDir, PidFile)); err == nil {
			if pgid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && pgid > 1 {
				_ = syscall.Kill(-pgid, syscall.SIGKILL)
			}
		}
		_ = c.Wait()
	})
	testwait.NoError(t, 10*time.Second, func() error {
		out, _ := os.ReadFile(filepath.Join(inv.StateDir, StdoutSpillFile))
		errOut, _ := os.ReadFile(filepath.Join(inv.StateDir, StderrSpillFile))
		if string(out) != "live-out\n" || string(errOut) != "live-err\n" {
			return fmt.Errorf("spills of a running program: stdout %q, stderr %q", out, errOut)
		}
		return nil
	})
}

// stdbuf is optional: without it spills are still written, only later.
func TestWrapperSpillsWithoutStdbuf(t *testing.T) {
	tools := t.TempDir()
	for _, name := range []string{"env", "setsid", "tee", "head", "rm", "mkdir"} {
		path, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(path, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", tools)
	inv := Invocation{Argv: []string{"/bin/sh", "-c", "printf out; printf err >&2"}, StdoutSpill: 100, StderrSpill: 100}
	r := runLocally(t, inv, nil, "")
	if got := r.file(t, StdoutSpillFile) + "|" + r.file(t, StderrSpillFile); got != "out|err" {
		t.Fatalf("spills without stdbuf: %q (stderr %q)", got, r.stderr)
	}
}
