package e2b_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/backend/seam"
	"sandtop/backend/target"
)

// seamCtx bounds one test's calls.
func seamCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// seamKey is an API key of E2B's shape, which the fake accepts.
const seamKey = "e2b_0123456789abcdef0123456789abcdef"

// End to end, all on loopback: a fake E2B control plane hands out envd URLs
// and tokens of our daemon running as a stock envd (--compat), and the seam
// runs over it exactly as it would over a real sandbox.

type fakeTeam struct {
	fake    *e2bfake.Fake
	daemons map[string]*daemontest.Env
}

func newFakeTeam(t *testing.T, ids ...string) *fakeTeam {
	t.Helper()
	team := &fakeTeam{fake: e2bfake.New(t, seamKey), daemons: map[string]*daemontest.Env{}}
	for _, id := range ids {
		env := daemontest.StartTCP(t, daemon.Config{Compat: true, Token: "envd-token-" + id})
		team.daemons[id] = env
		team.fake.Add(e2bfake.Sandbox{ID: id, EnvdURL: env.Addr, Token: env.Token})
	}
	return team
}

func (ft *fakeTeam) config() target.Config {
	env := map[string]string{"E2B_API_KEY": seamKey, "E2B_API_URL": ft.fake.URL}
	return target.Config{
		E2B:       true,
		Getenv:    func(k string) string { return env[k] },
		E2BConfig: e2b.Config{EnvdURLFor: ft.fake.EnvdURLFor},
	}
}

// openConnection opens a target with its state under a temp dir (the E2B
// layout, /home/user/workspace, does not exist on the test machine).
func openConnection(t *testing.T, tg target.Target) *target.Connection {
	t.Helper()
	// E2B's sandbox user "user" does not exist here; run as ourselves.
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	tg.User = me.Username
	dir := t.TempDir()
	s, err := target.Open(seamCtx(t), tg, seam.RuntimeConfig{
		RuntimeRoot: filepath.Join(dir, ".sandtop"), Cwd: dir, PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("open %s: %v", tg.Name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = s.Runtime.Dispose(ctx)
		s.Close()
	})
	return s
}

func TestE2BSeamListSpawnAttachTeardown(t *testing.T) {
	team := newFakeTeam(t, "sbxA", "sbxB")
	targets, err := target.ListTargets(seamCtx(t), team.config())
	if err != nil {
		t.Fatal(err)
	}
	if len(targets) != 2 || targets[0].Name != "e2b:sbxA" || targets[1].Name != "e2b:sbxB" {
		t.Fatalf("targets %v", targets)
	}
	if targets[0].User != "user" {
		t.Fatalf("default sandbox user %q, want E2B's \"user\"", targets[0].User)
	}
	s := openConnection(t, targets[0])
	if s.Extension {
		t.Fatal("a --compat daemon answered Hello; the seam should be on its compat control plane")
	}
	if s.Runtime.Info().Extension {
		t.Fatal("the seam's runtime says the daemon has the extension; it answered no Hello")
	}
	ctx := seamCtx(t)
	if l, err := s.Probe(ctx); l != e2b.Alive || err != nil {
		t.Fatalf("probe: %v %v", l, err)
	}

	// Spawn a group and tear it down through the seam's transaction.
	h, err := s.Runtime.Spawn(ctx, seam.SpawnSpec{
		Argv:  []string{"bash", "-c", "echo started; sleep 300 & sleep 300"},
		Cwd:   t.TempDir(),
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.OutputCollect(4096), Stderr: seam.OutputCollect(4096)},
		Grace: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}
	if h.Pgid() <= 1 {
		t.Fatalf("spawn published pgid %d", h.Pgid())
	}
	alive, err := s.Runtime.GroupAlive(ctx, h.Pgid())
	if err != nil || !alive {
		t.Fatalf("group %d alive after spawn: %v %v", h.Pgid(), alive, err)
	}

	// Attach: a terminal echoes what is typed into it.
	term, err := s.Runtime.SpawnTerminal(ctx, seam.TerminalSpec{
		Argv: []string{"/bin/cat"}, Cwd: t.TempDir(), Rows: 24, Cols: 80, Grace: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("spawn terminal: %v", err)
	}
	if err := term.Write(ctx, []byte("ping-e2b\n")); err != nil {
		t.Fatalf("terminal write: %v", err)
	}
	if got := readUntil(t, term.Output(), "ping-e2b", 30*time.Second); !strings.Contains(got, "ping-e2b") {
		t.Fatalf("terminal output %q lacks the echo", got)
	}
	if err := term.Terminate(ctx); err != nil {
		t.Fatalf("terminal teardown: %v", err)
	}

	h.Terminate()
	if ok, err := h.WaitForExit(ctx); !ok || err != nil {
		t.Fatalf("teardown: %v %v", ok, err)
	}
	if alive, err := s.Runtime.GroupAlive(ctx, h.Pgid()); err != nil || alive {
		t.Fatalf("group %d after teardown: alive %v err %v", h.Pgid(), alive, err)
	}
}

func TestE2BSeamSandboxVanishes(t *testing.T) {
	team := newFakeTeam(t, "sbxV")
	targets, err := target.ListTargets(seamCtx(t), team.config())
	if err != nil || len(targets) != 1 {
		t.Fatalf("%v %v", targets, err)
	}
	s := openConnection(t, targets[0])
	ctx := seamCtx(t)
	h, err := s.Runtime.Spawn(ctx, seam.SpawnSpec{
		Argv:  []string{"sleep", "300"},
		Cwd:   t.TempDir(),
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.OutputCollect(1024), Stderr: seam.OutputCollect(1024)},
		Grace: 500 * time.Millisecond,
	})
	if err != nil {
		t.Fatalf("spawn: %v", err)
	}

	// The sandbox dies: its daemon (and everything in it) stops, and the
	// control plane forgets it, as when E2B kills an expired sandbox.
	env := team.daemons["sbxV"]
	stopCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := env.Daemon.KillAll(stopCtx); err != nil {
		t.Fatal(err)
	}
	if err := env.Daemon.Shutdown(stopCtx); err != nil {
		t.Fatal(err)
	}
	// Before the control plane forgets it, a dead envd is a fault, not "gone".
	if l, _ := s.Probe(ctx); l != e2b.Unreachable {
		t.Fatalf("envd down but sandbox listed: %v, want unreachable", l)
	}
	team.fake.Remove("sbxV")
	if l, err := s.Probe(ctx); l != e2b.Gone || err != nil {
		t.Fatalf("vanished sandbox: %v %v", l, err)
	}
	// Its groups are settled: the seam's wait and teardown end, no error.
	h.Terminate()
	if ok, err := h.WaitForExit(ctx); !ok || err != nil {
		t.Fatalf("wait on a vanished sandbox: %v %v", ok, err)
	}
	if ts, err := target.ListTargets(ctx, team.config()); err != nil || len(ts) != 0 {
		t.Fatalf("listing after the vanish: %v %v", ts, err)
	}
	cfg := team.config()
	cfg.E2BSandboxID = "sbxV"
	if _, err := target.ListTargets(ctx, cfg); !errors.Is(err, e2b.ErrSandboxGone) {
		t.Fatalf("connecting to the vanished sandbox: %v", err)
	}
}

func TestE2BSeamWrongKey(t *testing.T) {
	team := newFakeTeam(t)
	cfg := team.config()
	cfg.Getenv = func(k string) string {
		return map[string]string{"E2B_API_KEY": "e2b_0bad", "E2B_API_URL": team.fake.URL}[k]
	}
	_, err := target.ListTargets(seamCtx(t), cfg)
	if err == nil || err.Error() != "e2b: API key rejected (401): check E2B_API_KEY" {
		t.Fatalf("wrong key: %v", err)
	}
}

// readUntil reads r until want appears or the wait passes.
func readUntil(t *testing.T, r io.Reader, want string, wait time.Duration) string {
	t.Helper()
	var buf bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		chunk := make([]byte, 4096)
		for !strings.Contains(buf.String(), want) {
			n, err := r.Read(chunk)
			buf.Write(chunk[:n])
			if err != nil {
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(wait):
		t.Fatalf("no %q within %v", want, wait)
	}
	return buf.String()
}
