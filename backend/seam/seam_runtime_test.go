package seam

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/groupstate"
	"sandtop/testwait"
)

func TestSpawnValidatesPreconditionsBeforeAnyWork(t *testing.T) {
	s := newSeam(t, true, nil)
	before := len(s.wire.calls) // NewRuntime's Hello
	base := SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: collectBoth(8), Grace: 100 * time.Millisecond}
	cases := map[string]func(*SpawnSpec){
		"non-empty program": func(sp *SpawnSpec) { sp.Argv = nil },
		"empty argv[0]":     func(sp *SpawnSpec) { sp.Argv = []string{""} },
		"grace 0":           func(sp *SpawnSpec) { sp.Grace = 0 },
		"grace -1ns":        func(sp *SpawnSpec) { sp.Grace = -1 },
		"grace too long":    func(sp *SpawnSpec) { sp.Grace = MaxGrace + 1 },
		"two stdin modes":   func(sp *SpawnSpec) { sp.Stdio.Stdin = StdinMode{Ignore: true, Pipe: true} },
		"no stdout mode":    func(sp *SpawnSpec) { sp.Stdio.Stdout = OutputMode{} },
		"zero maxBytes":     func(sp *SpawnSpec) { sp.Stdio.Stdout = OutputCollect(0) },
		"zero spill":        func(sp *SpawnSpec) { sp.Stdio.Stdout = OutputCollect(1, 0) },
		"relative cwd":      func(sp *SpawnSpec) { sp.Cwd = "work" },
		"NUL in argv":       func(sp *SpawnSpec) { sp.Argv = []string{"/bin/echo", "a\x00b"} },
	}
	// A bad grace is named, with the bound and the value given.
	graceErrors := map[string]string{
		"0":        "subprocess grace must be positive and at most 596h31m23.647s (got 0s)",
		"-1ns":     "subprocess grace must be positive and at most 596h31m23.647s (got -1ns)",
		"too long": "subprocess grace must be positive and at most 596h31m23.647s (got 596h31m23.647000001s)",
	}
	for name, mutate := range cases {
		sp := base
		mutate(&sp)
		if _, err := s.rt.Spawn(s.ctx(), sp); err == nil {
			t.Errorf("%s: accepted", name)
		} else if got := strings.TrimPrefix(name, "grace "); got != name && err.Error() != graceErrors[got] {
			t.Errorf("%s: %v", name, err)
		}
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errors.New("caller gave up"))
	if _, err := s.rt.Spawn(ctx, base); err == nil || !strings.Contains(err.Error(), "aborted before spawn: caller gave up") {
		t.Errorf("pre-aborted: %v", err)
	}
	if n := len(s.wire.calls); n != before {
		t.Fatalf("rejected specs reached the daemon: %v", s.wire.calls[before:])
	}
}

func TestSpawnFailureLeavesNothingBehind(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.failOn("Start:wrapper", 1, errInjected)
		_, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: collectBoth(8), Grace: 100 * time.Millisecond})
		if err == nil || !strings.Contains(err.Error(), "spawn failed") {
			t.Fatalf("err = %v", err)
		}
		// A program that does not exist is an exit status, not a spawn error.
		h := s.spawn(collectBoth(256), 100*time.Millisecond, nil, "/no/such/program")
		wantExit(t, settle(t, h), 127)
		// A cwd that does not exist fails the start.
		if _, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/no/such/dir", Stdio: collectBoth(8), Grace: 100 * time.Millisecond}); err == nil {
			t.Fatal("missing cwd accepted")
		}
		if s.rt.liveHandles() > 1 {
			t.Fatalf("%d handles owned after failed spawns", s.rt.liveHandles())
		}
	})
}

func TestDisposeTerminatesJoinsAndRefusesNewWork(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		var hs []*Handle
		for i := 0; i < 3; i++ {
			hs = append(hs, spawnReady(t, s, 100*time.Millisecond, `trap "" TERM; echo ready; sleep 1000`))
		}
		if err := s.rt.Dispose(s.ctx()); err != nil {
			t.Fatal(err)
		}
		for _, h := range hs {
			if groupAliveNow(t, h.Pgid()) {
				t.Fatalf("group %d alive after Dispose", h.Pgid())
			}
			wantSignal(t, settle(t, h), "SIGKILL")
		}
		if _, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: collectBoth(8), Grace: 100 * time.Millisecond}); !errors.Is(err, ErrDisposing) {
			t.Fatalf("spawn after dispose: %v", err)
		}
	})
}

func TestDisposeReportsEveryFailureTogetherAndCanRetry(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		a := spawnReady(t, s, 30*time.Millisecond, `trap "" TERM; echo ready; sleep 1000`)
		b := spawnReady(t, s, 30*time.Millisecond, `trap "" TERM; echo ready; sleep 1000`)
		for _, k := range []string{"SignalGroup:SIGTERM", "SignalGroup:SIGKILL", "Start:kill", "SendSignal:SIGNAL_SIGKILL"} {
			s.wire.failOn(k, 0, errInjected)
		}
		err := s.rt.Dispose(s.ctx())
		if err == nil {
			t.Fatal("dispose succeeded with every signal failing")
		}
		for _, h := range []*Handle{a, b} {
			if !strings.Contains(err.Error(), "process group "+itoa(h.Pgid())) {
				t.Errorf("dispose error does not name group %d: %v", h.Pgid(), err)
			}
		}
		if s.rt.liveHandles() != 2 {
			t.Fatalf("failed handles were dropped (live=%d)", s.rt.liveHandles())
		}
		s.wire.clearFaults()
		if err := s.rt.Dispose(s.ctx()); err != nil {
			t.Fatalf("retry: %v", err)
		}
		if s.rt.liveHandles() != 0 {
			t.Fatal("handles still owned after a successful dispose")
		}
	})
}

func TestResolveExecutable(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		ctx := s.ctx()
		startsBefore := len(s.wire.callsOf("Start"))
		defer func() {
			// sandtop's daemon answers Resolve itself: no shell is started.
			if !s.compat && (s.wire.count("Resolve") == 0 || len(s.wire.callsOf("Start")) != startsBefore) {
				t.Errorf("extension: %d Resolve calls and %d Starts; want Resolve and no Start", s.wire.count("Resolve"), len(s.wire.callsOf("Start"))-startsBefore)
			}
		}()
		if got, err := s.rt.ResolveExecutable(ctx, "/bin/sh", nil); err != nil || got != "/bin/sh" {
			t.Fatalf("absolute: %q %v", got, err)
		}
		if _, err := s.rt.ResolveExecutable(ctx, "/etc/passwd", nil); !errors.Is(err, ErrNotExecutable) {
			t.Fatalf("a non-executable absolute path: %v, want ErrNotExecutable", err)
		}
		if _, err := s.rt.ResolveExecutable(ctx, "no-such-tool-xyz", nil); !errors.Is(err, ErrNotExecutable) || errors.Is(err, ErrNotFound) {
			t.Fatalf("a name on no PATH: %v, want ErrNotExecutable", err)
		}
		if got, err := s.rt.ResolveExecutable(ctx, "sh", nil); err != nil || !strings.HasSuffix(got, "/sh") || !strings.HasPrefix(got, "/") {
			t.Fatalf("bare: %q %v", got, err)
		}
		bin := filepath.Join(s.rt.cfg.Cwd, "tools")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "mytool"), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		got, err := s.rt.ResolveExecutable(ctx, "mytool", []EnvEntry{SetEnv("PATH", "tools:/usr/bin")})
		if err != nil || got != filepath.Join(bin, "mytool") {
			t.Fatalf("relative PATH hit: %q %v", got, err)
		}
		for _, bad := range []string{"", "./bin/server", "node_modules/.bin/server", "cd", "no-such-tool-xyz"} {
			if got, err := s.rt.ResolveExecutable(ctx, bad, nil); err == nil {
				t.Errorf("%q resolved to %q", bad, got)
			}
		}
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := s.rt.ResolveExecutable(cctx, "sh", nil); err == nil {
			t.Error("resolved with an aborted context")
		}
	})
}

// CheckProgram refuses a program the sandbox cannot find with
// ResolveExecutable's errors and starts nothing; sandtop's daemon checks
// within the Start, with no Resolve call before it.
func TestSpawnChecksProgram(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		ctx := s.ctx()
		spawn := func(env []EnvEntry, argv ...string) (*Handle, error) {
			return s.rt.Spawn(ctx, SpawnSpec{Argv: argv, Cwd: s.rt.cfg.Cwd, Stdio: collectBoth(64), Grace: 100 * time.Millisecond, Env: env, CheckProgram: true})
		}
		for _, c := range []struct {
			argv string
			want error
			says string
		}{
			{"no-such-tool-xyz", ErrNotExecutable, "no-such-tool-xyz was not found on the sandbox PATH"},
			{"/etc/passwd", ErrNotExecutable, "/etc/passwd is not an executable file in the sandbox"},
			{"./bin/server", ErrRelativeCommand, "./bin/server is a relative path"},
		} {
			if _, err := spawn(nil, c.argv); !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Errorf("spawn %q: %v; want %v saying %q", c.argv, err, c.want, c.says)
			}
		}
		if groups, err := s.rt.listGroups(ctx); err != nil || len(groups) != 0 {
			t.Fatalf("refused spawns left groups: %+v %v", groups, err)
		}
		if starts := len(s.wire.callsOf("Start")); !s.compat && starts != 2 {
			t.Errorf("extension: %d Starts for two refused programs and a relative path; want 2, and nothing else started", starts)
		}
		bin := filepath.Join(s.rt.cfg.Cwd, "tools")
		if err := os.MkdirAll(bin, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bin, "mytool"), []byte("#!/bin/sh\necho mine\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		h, err := spawn([]EnvEntry{SetEnv("PATH", bin+":/usr/bin:/bin")}, "mytool")
		if err != nil {
			t.Fatalf("a program on the given PATH: %v", err)
		}
		if o := settle(t, h); o.ExitCode == nil || *o.ExitCode != 0 || h.Collected.Stdout.ReadFrom(0).Text != "mine\n" {
			t.Fatalf("mytool: %+v, stdout %q", o, h.Collected.Stdout.ReadFrom(0).Text)
		}
		if !s.compat && s.wire.count("Resolve") != 0 {
			t.Errorf("extension: %d Resolve calls; the Start should check", s.wire.count("Resolve"))
		}
	})
}

func TestListGroupsAndAdoptAfterRestart(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(64), 200*time.Millisecond, nil, "/bin/sh", "-c", `echo ready; sleep 1000`)
		testwait.For(t, 10*time.Second, "ready", func() bool { return h.Collected.Stdout.ReadFrom(0).Text == "ready\n" })
		done := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(2, 100), Stderr: OutputCollect(8)}, 200*time.Millisecond, nil, "/bin/sh", "-c", "printf abcd; exit 4")
		wantExit(t, settle(t, done), 4)
		waitTreeGone(t, done)
		// A group written by another client in the same layout.
		foreign := filepath.Join(s.d.RuntimeRoot, "processes", "dsh-foreign")
		if err := os.MkdirAll(foreign, 0o700); err != nil {
			t.Fatal(err)
		}
		_ = os.WriteFile(filepath.Join(foreign, "pid"), []byte("999999"), 0o600)
		_ = os.WriteFile(filepath.Join(foreign, "exit-code"), []byte("0"), 0o600)

		// A second runtime stands for sandtop after a restart.
		rt2, err := NewRuntimeClients(s.ctx(), s.proc, s.sup, RuntimeConfig{RuntimeRoot: s.d.RuntimeRoot, Cwd: "/", PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		groups, err := rt2.listGroups(s.ctx())
		if err != nil {
			t.Fatal(err)
		}
		byID := map[string]PublishedGroup{}
		for _, g := range groups {
			byID[g.ID] = g
		}
		if g := byID[h.ID()]; g.State != groupstate.Running || g.Pgid != h.Pgid() || g.ExitCode != nil {
			t.Fatalf("running group: %+v", g)
		}
		if g := byID[done.ID()]; g.State != groupstate.Settled || g.ExitCode == nil || *g.ExitCode != 4 || len(g.SpillPaths) != 1 {
			t.Fatalf("settled group: %+v", g)
		}
		if g := byID["dsh-foreign"]; g.State != groupstate.Settled || g.Pgid != 999999 {
			t.Fatalf("foreign group: %+v", g)
		}
		adopted, err := rt2.adopt(s.ctx(), h.ID(), 200*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		adopted.Terminate()
		waitTreeGone(t, adopted)
		wantSignal(t, settle(t, adopted), "SIGTERM")
		if groupAliveNow(t, h.Pgid()) {
			t.Fatal("adopted group survived")
		}
		if err := rt2.Dispose(s.ctx()); err != nil {
			t.Fatal(err)
		}
		wantSignal(t, settle(t, h), "SIGTERM")
	})
}

func TestTeardownGroupReportsProgress(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := spawnReady(t, s, 10*time.Second, `trap "" TERM; echo ready; sleep 1000`)
		var evs []TeardownEvent
		if err := s.rt.TeardownGroup(s.ctx(), h.Pgid(), 100*time.Millisecond, func(e TeardownEvent) { evs = append(evs, e) }); err != nil {
			t.Fatal(err)
		}
		var phases []TeardownPhase
		for i, e := range evs {
			phases = append(phases, e.Phase)
			if e.Pgid != h.Pgid() || e.At.IsZero() || (i > 0 && e.At.Before(evs[i-1].At)) {
				t.Fatalf("event %+v", e)
			}
		}
		if got := phasesText(phases); got != "term-sent waiting kill-sent empty" {
			t.Fatalf("phases %q", got)
		}
		if err := s.rt.TeardownGroup(s.ctx(), 1, time.Second, nil); err == nil {
			t.Fatal("pgid 1 accepted")
		}
		waitTreeGone(t, h)
	})
}

func TestNewRuntimeOverEnvdClientPicksThePlane(t *testing.T) {
	for _, p := range bothPlanes {
		d := daemontest.Start(t, daemon.Config{Compat: p.compat})
		rt, err := NewRuntime(context.Background(), d.Client, RuntimeConfig{RuntimeRoot: d.RuntimeRoot, Cwd: "/", PollInterval: time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		want := map[bool]string{false: "extension", true: "compat"}[p.compat]
		if rt.control.Kind() != want {
			t.Fatalf("compat=%v picked %s", p.compat, rt.control.Kind())
		}
		h, err := rt.Spawn(context.Background(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: collectBoth(8), Grace: 100 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		wantExit(t, settle(t, h), 0)
		if err := rt.Dispose(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := NewRuntimeClients(context.Background(), nil, nil, RuntimeConfig{}); err == nil {
		t.Fatal("nil client accepted")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// On sandtop's daemon a teardown does not poll for the group's end: the
// daemon waits for it (wait_empty_ms) and answers when it is empty.
func TestTeardownWaitsForTheGroupOnTheDaemon(t *testing.T) {
	s := newSeam(t, false, nil)
	h := spawnReady(t, s, 10*time.Second, `echo ready; sleep 1000`)
	start := time.Now()
	if err := s.rt.TeardownGroup(s.ctx(), h.Pgid(), 5*time.Second, nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	// One waiting look after the signal, where polling makes several that
	// do not wait. (The handle's own watch may look too: it is not counted.)
	s.wire.mu.Lock()
	waits := s.wire.waits
	s.wire.mu.Unlock()
	if waits < 1 || waits > 2 { // two only if SIGKILL had to follow
		t.Fatalf("the teardown asked the daemon to wait %d times, want once", waits)
	}
	if took > 3*time.Second {
		t.Fatalf("a group that obeys SIGTERM took %v to be seen empty", took)
	}
	waitTreeGone(t, h)
}
