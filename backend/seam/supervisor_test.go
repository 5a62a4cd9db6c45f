package seam

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/seam/control"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// Stock envd's stand-in is sandtop's daemon in compat mode: no extension,
// a plain Start, and /files. There a spawn uploads this test binary (which
// links the supervisor) and runs each group under it.

// stockSeam is a compat seam whose runtime can upload; uploads counts the
// files it uploaded. tweak may change the runtime's config.
func stockSeam(t *testing.T, tweak func(*RuntimeConfig)) (s *seam, uploads *atomic.Int32) {
	t.Helper()
	uploads = &atomic.Int32{}
	var upload func(context.Context, string, io.Reader) error
	s = newSeam(t, true, func(_ *daemon.Config, rc *RuntimeConfig) {
		rc.Upload = func(ctx context.Context, p string, body io.Reader) error {
			uploads.Add(1)
			return upload(ctx, p, body)
		}
		if tweak != nil {
			tweak(rc)
		}
	})
	upload = s.d.Client.Upload // used from the first spawn on, after this
	return s, uploads
}

// treeSize counts pid and its live descendants, from /proc.
func treeSize(t *testing.T, pid int) int {
	t.Helper()
	children := map[int][]int{}
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	n := 0
	for todo := []int{pid}; len(todo) > 0; {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		n++
		todo = append(todo, children[p]...)
	}
	return n
}

func TestStockEnvdGroupsRunUnderOneSupervisorEach(t *testing.T) {
	s, uploads := stockSeam(t, nil)
	var hs []*Handle
	for range 3 {
		hs = append(hs, s.spawn(collectBoth(1<<20), time.Second, nil, "sleep", "300"))
	}
	for _, h := range hs {
		// What envd started (the supervisor) and everything under it: the
		// supervisor and the program. The bash wrapper costs eight.
		if n := treeSize(t, h.StartPid()); n != 2 {
			t.Errorf("group %d: %d processes from the started one down, want 2 (supervisor and program)", h.Pgid(), n)
		}
		argv, _ := os.ReadFile("/proc/" + strconv.Itoa(h.StartPid()) + "/cmdline")
		if dir, ok := wrapper.Supervised(strings.Split(strings.TrimSuffix(string(argv), "\x00"), "\x00")); !ok || dir != h.stateDir {
			t.Errorf("the started process runs %q, want the supervisor of %s", argv, h.stateDir)
		}
	}
	if n := uploads.Load(); n != 1 {
		t.Errorf("%d uploads for three spawns, want 1", n)
	}
	// The binary is named by its hash, and a new runtime on the same root
	// reuses it.
	self, _ := os.Executable()
	sum, err := SupervisorID(self)
	if err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(s.rt.runtimeRoot(), wrapper.SupervisorDir, "*"))
	if want := wrapper.SupervisorBinary(s.rt.runtimeRoot(), sum); len(bins) != 1 || bins[0] != want {
		t.Errorf("supervisor binaries %q, want only %s", bins, want)
	}
	rt2, err := NewRuntimeClients(s.ctx(), s.proc, s.sup, RuntimeConfig{RuntimeRoot: s.rt.runtimeRoot(), Cwd: "/", PollInterval: 5 * time.Millisecond,
		Upload: func(context.Context, string, io.Reader) error { uploads.Add(1); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt2.Dispose(context.Background()) })
	h, err := rt2.Spawn(s.ctx(), SpawnSpec{Argv: []string{"true"}, Cwd: "/", Grace: time.Second, Stdio: collectBoth(1 << 10)})
	if err != nil {
		t.Fatal(err)
	}
	wantExit(t, settle(t, h), 0)
	if n := uploads.Load(); n != 1 {
		t.Errorf("a second runtime uploaded again (%d uploads)", n)
	}
	if why := rt2.SupervisorFallback(); why != "" {
		t.Errorf("fallback %q", why)
	}
	// Listed as sandtop's, under the supervisor, with the started pid as
	// the leader pid (its output can be followed).
	snap, err := s.rt.Snapshot(s.ctx(), WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range hs {
		g := findView(snap, h.Pgid())
		if g == nil {
			t.Fatalf("group %d not listed", h.Pgid())
		}
		if g.Supervisor != sandbox.SupervisorStandalone || g.Origin != sandbox.OriginSandtop || g.StateDir != h.stateDir || g.LeaderPID != h.StartPid() ||
			strings.Join(g.Argv, " ") != "sleep 300" || len(g.Members) != 1 {
			t.Errorf("group %d listed as %+v", h.Pgid(), *g)
		}
	}
	for _, g := range snap.Groups {
		for _, m := range g.Members {
			if _, ok := wrapper.Supervised(m.Argv); ok && g.Origin != sandbox.OriginOther {
				t.Errorf("a supervisor is listed in group %d (%s)", g.PGID, g.Origin)
			}
		}
	}
	for _, h := range hs {
		h.Terminate()
		wantSignal(t, settle(t, h), "SIGTERM")
		waitTreeGone(t, h)
	}
}

func TestStockEnvdSupervisorPublishesExactFacts(t *testing.T) {
	s, _ := stockSeam(t, nil)
	cases := []struct {
		argv   []string
		code   int
		signal string
		stderr string
	}{
		{argv: []string{"sh", "-c", "printf out; printf err >&2; exit 3"}, code: 3},
		{argv: []string{"sh", "-c", "exit 143"}, code: 143},
		{argv: []string{"sh", "-c", "kill -TERM $$"}, signal: "SIGTERM"},
		{argv: []string{"sh", "-c", "kill -SEGV $$"}, signal: "SIGSEGV"},
		{argv: []string{"no-such-program-here"}, code: 127, stderr: "no-such-program-here"},
	}
	for _, c := range cases {
		h, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: c.argv, Cwd: "/", Grace: time.Second, Stdio: collectBoth(1 << 20)})
		if err != nil {
			t.Fatalf("%q: %v", c.argv, err)
		}
		o := settle(t, h)
		if c.signal != "" {
			wantSignal(t, o, c.signal)
		} else {
			wantExit(t, o, c.code)
		}
		if c.code == 3 {
			if out, errs := h.Collected.Stdout.ReadFrom(0).Text, h.Collected.Stderr.ReadFrom(0).Text; out != "out" || errs != "err" {
				t.Errorf("%q: stdout %q stderr %q", c.argv, out, errs)
			}
		}
		if c.stderr != "" && !strings.Contains(h.Collected.Stderr.ReadFrom(0).Text, c.stderr) {
			t.Errorf("%q: stderr %q does not name the program", c.argv, h.Collected.Stderr.ReadFrom(0).Text)
		}
		// The files say the same, and the started process ended as the
		// program did (envd's end event carries it).
		code, _ := os.ReadFile(filepath.Join(h.stateDir, wrapper.ExitCodeFile))
		sig, _ := os.ReadFile(filepath.Join(h.stateDir, wrapper.SignalFile))
		switch c.signal {
		case "SIGTERM":
			if string(code) != "143\n" || string(sig) != "15\n" || control.SignalInStatus(h.end.GetStatus()) != 15 {
				t.Errorf("%q: exit-code %q signal %q end %q", c.argv, code, sig, h.end.GetStatus())
			}
		case "SIGSEGV":
			if string(code) != "139\n" || string(sig) != "11\n" || control.SignalInStatus(h.end.GetStatus()) != 11 {
				t.Errorf("%q: exit-code %q signal %q end %q", c.argv, code, sig, h.end.GetStatus())
			}
		default:
			if string(code) != strconv.Itoa(c.code)+"\n" || len(sig) != 0 || int(h.end.GetExitCode()) != c.code {
				t.Errorf("%q: exit-code %q signal %q end %d", c.argv, code, sig, h.end.GetExitCode())
			}
		}
		waitTreeGone(t, h)
	}
}

func TestStockEnvdSupervisorStreamsStdinAndOutput(t *testing.T) {
	s, _ := stockSeam(t, nil)
	h, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"sh", "-c", "read -r x; echo got $x; echo $KEEP_ME"}, Cwd: "/", Grace: time.Second,
		Env:   []EnvEntry{{Name: "KEEP_ME", Value: "kept value"}},
		Stdio: Stdio{Stdin: StdinPipe(), Stdout: OutputPipe(), Stderr: OutputCollect(1 << 10)}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Stdin.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	_ = h.Stdin.Close()
	out, err := io.ReadAll(h.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "got hello\nkept value\n" {
		t.Errorf("stdout %q", out)
	}
	wantExit(t, settle(t, h), 0)
	// The environment never shows in the supervisor's argv.
	argv, _ := os.ReadFile(filepath.Join(h.stateDir, wrapper.ArgvFile))
	if strings.Contains(string(argv), "kept value") {
		t.Errorf("argv file %q holds the environment", argv)
	}
}

func TestStockEnvdFallsBackToTheWrapperVisibly(t *testing.T) {
	// A "supervisor" the sandbox cannot execute as one: the spawn falls
	// back to the bash wrapper, says why, and the listing says which.
	bogus := filepath.Join(t.TempDir(), "not-a-supervisor")
	if err := os.WriteFile(bogus, []byte("echo this is no supervisor\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, uploads := stockSeam(t, func(rc *RuntimeConfig) { rc.SupervisorBinary = bogus })
	h := s.spawn(collectBoth(1<<20), time.Second, nil, "sleep", "300")
	why := s.rt.SupervisorFallback()
	if !strings.Contains(why, "cannot execute") {
		t.Errorf("fallback %q, want why the supervisor cannot run", why)
	}
	if uploads.Load() != 1 {
		t.Errorf("%d uploads, want 1", uploads.Load())
	}
	if n := treeSize(t, h.StartPid()); n <= 2 {
		t.Errorf("%d processes: not the wrapper", n)
	}
	if bins, _ := filepath.Glob(filepath.Join(s.rt.runtimeRoot(), wrapper.SupervisorDir, "*")); len(bins) != 0 {
		t.Errorf("a copy that cannot run is left behind: %q", bins)
	}
	snap, err := s.rt.Snapshot(s.ctx(), WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := findView(snap, h.Pgid()); g == nil || g.Supervisor != sandbox.SupervisorWrapper || strings.Join(g.Argv, " ") != "sleep 300" {
		t.Errorf("group listed as %+v, want under the wrapper", g)
	}
	// Decided once: the next spawn neither uploads nor asks again.
	h2 := s.spawn(collectBoth(1<<20), time.Second, nil, "true")
	wantExit(t, settle(t, h2), 0)
	if uploads.Load() != 1 {
		t.Errorf("%d uploads after a second spawn, want 1", uploads.Load())
	}
	h.Terminate()
	wantSignal(t, settle(t, h), "SIGTERM")
}

func TestStockEnvdNeverUploadsToLook(t *testing.T) {
	s, uploads := stockSeam(t, nil)
	if _, err := s.rt.Snapshot(s.ctx(), WatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(s.rt.runtimeRoot(), wrapper.SupervisorDir)); !os.IsNotExist(err) || uploads.Load() != 0 {
		t.Errorf("a listing changed the sandbox: %d uploads, bin dir: %v", uploads.Load(), err)
	}
}

// TestStockEnvdListsHundredsOfGroups starts 520 supervised groups and
// lists them all in one snapshot: the table streams (it used to be one
// command capped at 8 MiB, which 500 wrapper groups overflowed).
func TestStockEnvdListsHundredsOfGroups(t *testing.T) {
	if testing.Short() {
		t.Skip("520 groups")
	}
	s, _ := stockSeam(t, nil)
	const n = 520
	hs := make([]*Handle, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			h, err := s.rt.Spawn(ctx, SpawnSpec{Argv: []string{"sleep", "600"}, Cwd: "/", Grace: time.Second, Stdio: Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(1 << 10), Stderr: OutputCollect(1 << 10)}})
			if err != nil {
				t.Errorf("spawn %d: %v", i, err)
				return
			}
			// Let go, as the CLI's run does: the group runs on, and
			// nothing here polls it.
			h.Detach()
			hs[i] = h
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	snap, err := s.rt.Snapshot(ctx, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	listed := 0
	for _, h := range hs {
		if g := findView(snap, h.Pgid()); g != nil && g.Supervisor == sandbox.SupervisorStandalone && g.State == groupstate.Running {
			listed++
		}
	}
	if listed != n {
		t.Errorf("%d of %d groups listed running under the supervisor", listed, n)
	}
	for _, h := range hs {
		_ = syscall.Kill(-h.Pgid(), syscall.SIGKILL)
	}
}

// TestStreamedCommandHasNoOutputCap: a control command may print more than
// the 8 MiB one Run keeps, when it streams.
func TestStreamedCommandHasNoOutputCap(t *testing.T) {
	s := newSeam(t, true, nil)
	var got int
	res, err := s.rt.runner.Stream(s.ctx(), `head -c 20000000 /dev/zero`, nil, func(b []byte) error { got += len(b); return nil })
	if err != nil || res.ExitCode != 0 || got != 20000000 {
		t.Fatalf("streamed %d bytes, exit %d, err %v", got, res.ExitCode, err)
	}
}

// A group that ignores SIGTERM is killed; the supervisor, outside the
// group and left alone, still publishes how the program ended.
func TestStockEnvdKillTierKeepsTheSupervisorsFacts(t *testing.T) {
	s, _ := stockSeam(t, nil)
	h := s.spawn(collectBoth(1<<20), 200*time.Millisecond, nil, "sh", "-c", `trap "" TERM; echo ready; exec sleep 300`)
	testwait.For(t, 10*time.Second, "the program to ignore TERM", func() bool { return h.Collected.Stdout.ReadFrom(0).Text == "ready\n" })
	h.Terminate()
	wantSignal(t, settle(t, h), "SIGKILL")
	code, _ := os.ReadFile(filepath.Join(h.stateDir, wrapper.ExitCodeFile))
	sig, _ := os.ReadFile(filepath.Join(h.stateDir, wrapper.SignalFile))
	if string(code) != "137\n" || string(sig) != "9\n" {
		t.Errorf("exit-code %q signal %q, want 137 and 9", code, sig)
	}
	waitTreeGone(t, h)
}

// A listing on stock envd reads the process table and the state
// directories through the supervisor once a spawn installed it, and with
// ps and find before (looking never uploads): the same groups either way.
func TestStockEnvdListingReadsThroughTheInstalledSupervisor(t *testing.T) {
	s, uploads := stockSeam(t, nil)
	comp, ok := s.rt.control.(control.Compat)
	if !ok || comp.Runner.Scanner == "" || s.rt.runner.Scanner != comp.Runner.Scanner {
		t.Fatalf("the runtime names no scanner (%q, %q)", comp.Runner.Scanner, s.rt.runner.Scanner)
	}
	byPs := func(rows []ProcessRow) bool {
		return slices.ContainsFunc(rows, func(r ProcessRow) bool { return isOurPS(r.Argv) })
	}
	rows, _, err := s.rt.processTable(s.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if !byPs(rows) || uploads.Load() != 0 {
		t.Fatalf("before any spawn: read by ps %v, %d uploads; want ps and none", byPs(rows), uploads.Load())
	}
	if _, err := os.Stat(comp.Runner.Scanner); err == nil {
		t.Fatal("the supervisor is installed before any spawn")
	}

	h := s.spawn(collectBoth(1<<20), time.Second, nil, "sleep", "300")
	done := s.spawn(collectBoth(1<<20), time.Second, nil, "bash", "-c", "exit 7")
	wantExit(t, settle(t, done), 7)
	if _, err := os.Stat(comp.Runner.Scanner); err != nil {
		t.Fatalf("the spawn installed no supervisor at %s: %v", comp.Runner.Scanner, err)
	}
	rows, _, err = s.rt.processTable(s.ctx())
	if err != nil {
		t.Fatal(err)
	}
	if byPs(rows) {
		t.Error("the table still comes from ps")
	}
	if !slices.ContainsFunc(rows, func(r ProcessRow) bool { return r.Pid == h.Pgid() && strings.Join(r.Argv, " ") == "sleep 300" }) {
		t.Errorf("the group's leader %d is not in the supervisor's table", h.Pgid())
	}
	// The states, through the supervisor and through find.
	scanned, err := comp.ReadAllStates(s.ctx(), s.rt.runtimeRoot())
	if err != nil {
		t.Fatal(err)
	}
	without := comp
	without.Runner.Scanner = ""
	found, err := without.ReadAllStates(s.ctx(), s.rt.runtimeRoot())
	if err != nil {
		t.Fatal(err)
	}
	asJSON := func(st []control.StateFiles) string {
		st = slices.Clone(st)
		slices.SortFunc(st, func(a, b control.StateFiles) int { return strings.Compare(a.ID, b.ID) })
		b, _ := json.Marshal(st)
		return string(b)
	}
	if len(scanned) < 2 || asJSON(scanned) != asJSON(found) {
		t.Errorf("the states differ:\nsupervisor %s\nfind       %s", asJSON(scanned), asJSON(found))
	}
	snap, err := s.rt.Snapshot(s.ctx(), WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if g := findView(snap, h.Pgid()); g == nil || g.Supervisor != sandbox.SupervisorStandalone || strings.Join(g.Argv, " ") != "sleep 300" {
		t.Errorf("the running group is listed as %+v", g)
	}
	if g := findView(snap, done.Pgid()); g == nil || g.Exit == nil || g.Exit.Code != 7 {
		t.Errorf("the ended group is listed as %+v", g)
	}
}
