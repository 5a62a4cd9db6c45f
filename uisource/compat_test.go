package uisource

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/seam"
	"sandtop/sandbox"
	"sandtop/ui"
)

// newTestSource runs a real in-process daemon (cfg.Compat: stock envd's
// surface only) and the real adapter over it. Close is registered.
func newTestSource(t testing.TB, cfg daemon.Config, opts Options) (*backendSource, *daemontest.Env) {
	t.Helper()
	env := daemontest.Start(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// Stock envd reports no runtime root; the target names one.
	rt, err := seam.NewRuntime(ctx, env.Client, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/tmp", RuntimeRoot: env.RuntimeRoot})
	if err != nil {
		t.Fatalf("runtime: %v", err)
	}
	if opts.Cwd == "" {
		opts.Cwd = "/tmp"
	}
	if opts.Interval == 0 {
		opts.Interval = 200 * time.Millisecond
	}
	opts.Name = "test"
	src, err := New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	bs := src.(*backendSource)
	t.Cleanup(func() { bs.Close() })
	return bs, env
}

func hasMember(g *sandbox.Group, argv0 string) bool {
	for _, p := range g.Members {
		if len(p.Argv) > 0 && p.Argv[0] == argv0 {
			return true
		}
	}
	return false
}

func TestCompatSourceGroupsTerminalsTeardown(t *testing.T) {
	src, _ := newTestSource(t, daemon.Config{Compat: true}, Options{})
	if !src.compat {
		t.Fatal("the adapter did not notice the missing extension")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	info, err := src.Info(ctx)
	if err != nil || !slices.Contains(info.Capabilities, "compat") {
		t.Fatalf("Info = %+v, %v; want the compat capability", info, err)
	}
	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A spawned TERM-ignoring group is listed, folded and ours.
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`}, "")
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	s := nextSnapshotWhere(t, watch, "the spawned group with its sleep", func(s sandbox.Snapshot) bool {
		g := findGroup(s, pgid)
		return g != nil && hasMember(g, "sleep")
	})
	g := findGroup(s, pgid)
	if g.Origin != sandbox.OriginSandtop || g.LeaderPID == 0 || !strings.HasPrefix(g.CommandLine(), "sh -c ") {
		t.Errorf("group: origin %v, leader %d, command %q; want sandtop, the outer pid, the user's argv", g.Origin, g.LeaderPID, g.CommandLine())
	}

	// Teardown through the seam: TERM is ignored, so KILL, then empty.
	var mu sync.Mutex
	var phases []ui.TeardownPhase
	err = src.Teardown(ctx, pgid, 300*time.Millisecond, func(ev ui.TeardownEvent) {
		mu.Lock()
		phases = append(phases, ev.Phase)
		mu.Unlock()
	})
	mu.Lock()
	got := append([]ui.TeardownPhase(nil), phases...)
	mu.Unlock()
	if err != nil || len(got) < 3 || got[0] != ui.TeardownTerm || got[len(got)-1] != ui.TeardownEmpty || !containsPhase(got, ui.TeardownKill) {
		t.Fatalf("teardown = %v, phases %v; want TERM … KILL … empty", err, got)
	}
	nextSnapshotWhere(t, watch, "the torn-down group without live members", func(s sandbox.Snapshot) bool {
		g := findGroup(s, pgid)
		if g != nil && g.Live() {
			t.Logf("still: %+v", *g)
		}
		return g == nil || !g.Live() || g.LiveMembers() == 0
	})

	// A terminal is listed (in the seam's Snapshot) and attach,
	// write and echo work; the pane says that nothing is replayed.
	pid, err := src.SpawnTerminal(ctx, []string{"sh"}, 30, 100)
	if err != nil {
		t.Fatalf("spawn terminal: %v", err)
	}
	s = nextSnapshotWhere(t, watch, "the terminal", func(s sandbox.Snapshot) bool {
		for _, tm := range s.Terminals {
			if tm.PID == pid && tm.ForegroundPGID > 1 {
				return true
			}
		}
		return false
	})
	conn, err := src.Attach(ctx, pid)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	defer conn.Close()
	readUntil(t, conn, "no replay")
	if _, err := conn.Write([]byte("echo hi$((1+1))\r")); err != nil {
		t.Fatalf("write: %v", err)
	}
	readUntil(t, conn, "hi2")
	if err := conn.Resize(20, 60); err != nil {
		t.Fatalf("resize: %v", err)
	}
	fg, err := src.SignalForeground(ctx, pid, 28) // SIGWINCH: harmless
	if err != nil || fg <= 1 {
		t.Fatalf("signal foreground = %d, %v", fg, err)
	}
}
