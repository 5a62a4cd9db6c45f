package uisource

import (
	"context"
	"io"
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

// newDaemonSource runs a real in-process daemon and the real adapter.
func newDaemonSource(t testing.TB) ui.Source {
	t.Helper()
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt, err := seam.NewRuntime(ctx, env.Client, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/tmp"})
	if err != nil {
		t.Fatalf("runtime: %v", err)
	}
	src, err := New(rt, Options{Name: "test", Cwd: "/tmp", Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// nextSnapshotWhere reads snapshots until one satisfies cond.
func nextSnapshotWhere(t *testing.T, ch <-chan sandbox.Snapshot, what string, cond func(sandbox.Snapshot) bool) sandbox.Snapshot {
	t.Helper()
	deadline := time.After(30 * time.Second)
	for {
		select {
		case s, ok := <-ch:
			if !ok {
				t.Fatalf("watch ended while waiting for %s", what)
			}
			if cond(s) {
				return s
			}
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func findGroup(s sandbox.Snapshot, pgid int) *sandbox.Group {
	for i := range s.Groups {
		if s.Groups[i].PGID == pgid {
			return &s.Groups[i]
		}
	}
	return nil
}

func TestBackendSourceAgainstRealDaemon(t *testing.T) {
	src := newDaemonSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	info, err := src.Info(ctx)
	if err != nil || info.Version == "" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}

	// A TERM-ignoring group: spawned, listed as ours, torn down with KILL.
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", `trap "" TERM; echo ready; while :; do sleep 0.1; done`}, "")
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	// Wait until the trap is set and the loop runs (a sleep is a member).
	s := nextSnapshotWhere(t, watch, "the spawned group", func(s sandbox.Snapshot) bool {
		g := findGroup(s, pgid)
		if g == nil {
			return false
		}
		for _, p := range g.Members {
			if len(p.Argv) > 0 && p.Argv[0] == "sleep" {
				return true
			}
		}
		return false
	})
	g := findGroup(s, pgid)
	if g.Origin != sandbox.OriginSandtop {
		t.Errorf("spawned group origin = %v, want sandtop (tag %q, leader %d)", g.Origin, g.Tag, g.LeaderPID)
	}
	t.Logf("group: pgid %d leader %d tag %q members %d", g.PGID, g.LeaderPID, g.Tag, len(g.Members))

	var mu sync.Mutex
	var phases []ui.TeardownPhase
	err = src.Teardown(ctx, pgid, 300*time.Millisecond, func(ev ui.TeardownEvent) {
		mu.Lock()
		phases = append(phases, ev.Phase)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("teardown: %v", err)
	}
	mu.Lock()
	got := phases
	mu.Unlock()
	if len(got) < 3 || got[0] != ui.TeardownTerm || got[len(got)-1] != ui.TeardownEmpty || !containsPhase(got, ui.TeardownKill) {
		t.Fatalf("phases = %v, want TERM … KILL … empty", got)
	}

	// A terminal at a given size: attach, type, read the echo, detach.
	pid, err := src.SpawnTerminal(ctx, []string{"sh"}, 30, 100)
	if err != nil {
		t.Fatalf("spawn terminal: %v", err)
	}
	s = nextSnapshotWhere(t, watch, "the terminal", func(s sandbox.Snapshot) bool {
		for _, tm := range s.Terminals {
			if tm.PID == pid {
				return true
			}
		}
		return false
	})
	for _, tm := range s.Terminals {
		if tm.PID == pid && (tm.Rows != 30 || tm.Cols != 100) {
			t.Errorf("terminal size %dx%d, want 100x30", tm.Cols, tm.Rows)
		}
	}
	conn, err := src.Attach(ctx, pid)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	if _, err := conn.Write([]byte("echo hi$((1+1))\r")); err != nil {
		t.Fatalf("write: %v", err)
	}
	readUntil(t, conn, "hi2")
	if err := conn.Resize(20, 60); err != nil {
		t.Fatalf("resize: %v", err)
	}
	if err := conn.Close(); err != nil {
		t.Fatalf("detach: %v", err)
	}
	// Detaching left the terminal running.
	nextSnapshotWhere(t, watch, "the terminal still there after detach", func(s sandbox.Snapshot) bool {
		for _, tm := range s.Terminals {
			if tm.PID == pid && tm.Cols == 60 {
				return true
			}
		}
		return false
	})
	fg, err := src.SignalForeground(ctx, pid, 28) // SIGWINCH: harmless
	if err != nil || fg <= 1 {
		t.Fatalf("signal foreground = %d, %v", fg, err)
	}
}

func TestBackendSourceOutputReplaysThenFollows(t *testing.T) {
	src := newDaemonSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, _ := src.Watch(ctx)
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", "echo first; sleep 0.5; echo second; sleep 30"}, "")
	if err != nil {
		t.Fatal(err)
	}
	s := nextSnapshotWhere(t, watch, "group", func(s sandbox.Snapshot) bool { g := findGroup(s, pgid); return g != nil })
	g := findGroup(s, pgid)
	leader := g.LeaderPID
	if leader == 0 || g.CommandLine() != "sh -c \"echo first; sleep 0.5; echo second; sleep 30\"" {
		t.Fatalf("group %d: leader %d, command %q; want the wrapper folded in", pgid, leader, g.CommandLine())
	}
	r, err := src.Output(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	readUntil(t, streamReader{r}, "second")
}

// streamReader reads an output stream's bytes, without their times.
type streamReader struct{ s ui.OutputStream }

func (r streamReader) Read(p []byte) (int, error) {
	piece, err := r.s.Next()
	if len(piece.Data) > len(p) {
		return 0, io.ErrShortBuffer
	}
	return copy(p, piece.Data), err
}

func containsPhase(ps []ui.TeardownPhase, p ui.TeardownPhase) bool {
	for _, x := range ps {
		if x == p {
			return true
		}
	}
	return false
}

// readUntil reads r until want appears, with a deadline.
func readUntil(t *testing.T, r io.Reader, want string) {
	t.Helper()
	got := make(chan string, 1)
	var b strings.Builder
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := r.Read(buf)
			b.Write(buf[:n])
			if strings.Contains(b.String(), want) || err != nil {
				got <- b.String()
				return
			}
		}
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, want) {
			t.Fatalf("stream ended without %q: %q", want, s)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %q", want)
	}
}
