package cli

import (
	"context"
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

// restartSandbox is a private local sandbox (its own daemon), so a test
// may kill that daemon without disturbing the shared one.
type restartSandbox struct {
	t   *testing.T
	env []string
	dir string
}

func newRestartSandbox(t *testing.T) *restartSandbox {
	dir, err := os.MkdirTemp("", "str-")
	if err != nil {
		t.Fatal(err)
	}
	s := &restartSandbox{t: t, dir: dir, env: append(os.Environ(),
		"SANDTOP_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"SANDTOP_STATE_DIR="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"SANDTOP_CONFIG=",
	)}
	t.Cleanup(func() {
		_ = sandtopEnv(t, s.env, "daemon", "stop", "--grace", "500ms")
		if t.Failed() {
			if b, err := os.ReadFile(filepath.Join(dir, "state", "daemon.log")); err == nil {
				t.Logf("daemon log (tail):\n%s", tail(string(b), 40))
			}
		}
		os.RemoveAll(dir)
	})
	return s
}

func (s *restartSandbox) must(args ...string) string {
	s.t.Helper()
	r := sandtopEnv(s.t, s.env, args...)
	if r.code != 0 {
		s.t.Fatalf("sandtop %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (s *restartSandbox) run(tag string, argv ...string) int {
	s.t.Helper()
	out := s.must(append([]string{"run", "--tag", tag, "--"}, argv...)...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		s.t.Fatalf("run printed %q: %v", out, err)
	}
	return pgid
}

func (s *restartSandbox) list() listDoc {
	s.t.Helper()
	return decodeList(s.t, s.must("ls", "-o", "json"))
}

func (s *restartSandbox) daemonPid() int {
	s.t.Helper()
	var pid int
	out := s.must("daemon", "status")
	if _, err := fmt.Sscanf(out, "running  pid %d", &pid); err != nil || pid <= 1 {
		s.t.Fatalf("daemon status: %q", out)
	}
	return pid
}

// stateFile is a file of a group's state directory, read directly.
func (s *restartSandbox) stateFile(id, name string) string {
	dirs, _ := filepath.Glob(filepath.Join(s.dir, "*", "runtime", "processes", id))
	if len(dirs) != 1 {
		return ""
	}
	b, _ := os.ReadFile(filepath.Join(dirs[0], name))
	return string(b)
}

// A daemon that dies (SIGKILL) or is stopped (SIGTERM) loses no group: the
// shims keep running them, keep their output, and the next daemon adopts
// them with members, command and tag; logs, kill and prune work as before.
func TestDaemonRestartKeepsRunningGroups(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) { testDaemonRestart(t, sig) })
	}
}

func testDaemonRestart(t *testing.T, sig syscall.Signal) {
	s := newRestartSandbox(t)
	pipe := s.run("pipe", "bash", "-c", "sleep 3000 | sleep 3001")
	writer := s.run("writer", "bash", "-c", "i=0; while :; do echo line-$i; i=$((i+1)); sleep 0.05; done")
	stubborn := s.run("stubborn", "bash", "-c", "trap '' TERM; while :; do sleep 0.2; done")
	want := map[int]string{pipe: "pipe", writer: "writer", stubborn: "stubborn"}
	ids := map[int]string{}
	for _, g := range s.list().Groups {
		if want[g.PGID] != "" {
			ids[g.PGID] = g.ID
		}
	}
	if len(ids) != 3 {
		t.Fatalf("groups before the restart: %v", ids)
	}

	daemon := s.daemonPid()
	if err := syscall.Kill(daemon, sig); err != nil {
		t.Fatal(err)
	}
	// A dead daemon may stay a zombie: another test's in-process daemon makes
	// this test binary the subreaper that inherits it.
	testwait.For(t, 20*time.Second, "the daemon to exit", func() bool { st := procState(daemon); return st == "" || st == "Z" })
	// Output written while no daemon runs lands in the spill.
	marker := ""
	testwait.For(t, 20*time.Second, "the writer to go on without a daemon", func() bool {
		lines := strings.Fields(s.stateFile(ids[writer], "stdout.log"))
		if len(lines) == 0 {
			return false
		}
		if marker == "" {
			marker = lines[len(lines)-1]
			return false
		}
		return lines[len(lines)-1] != marker
	})

	doc := s.list() // starts a new daemon, which adopts the shims
	if s.daemonPid() == daemon {
		t.Fatal("the old daemon still runs")
	}
	for pgid, tag := range want {
		g, ok := findGroup(doc, pgid)
		if !ok || g.State != "running" || g.Tag != tag || len(g.Members) == 0 || len(g.Command) == 0 || g.Command[0] != "bash" {
			t.Fatalf("after the restart, group %d (%s): %+v (found %v)", pgid, tag, g, ok)
		}
	}
	if g, _ := findGroup(doc, pipe); len(g.Members) < 3 {
		t.Fatalf("pipeline group lists %d members, want bash and two sleeps: %+v", len(g.Members), g.Members)
	}
	if out := s.must("logs", strconv.Itoa(writer)); !strings.Contains(out, marker+"\n") {
		t.Fatalf("logs after the restart lack %q, written while no daemon ran:\n%s", marker, tail(out, 5))
	}

	// logs -f: the replay (the ring kept while no daemon read, then what
	// the new daemon received), then live lines.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	follow := exec.CommandContext(ctx, sandtopBin, "logs", "-f", strconv.Itoa(writer))
	// Dies with the test binary, even when go test's timeout kills it.
	follow.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	follow.Env = s.env
	out, _ := follow.Output()
	cancel()
	if !strings.Contains(string(out), "line-") {
		t.Fatalf("logs -f after the restart printed %q", tail(string(out), 3))
	}

	s.must("prune", "--older-than", "0s")
	for pgid, id := range ids {
		if s.stateFile(id, "pid") == "" {
			t.Fatalf("prune removed the state of live group %d", pgid)
		}
	}
	for pgid := range want {
		out := s.must("kill", "--grace", "1s", strconv.Itoa(pgid))
		if !strings.Contains(out, "is empty") {
			t.Fatalf("kill %d: %s", pgid, out)
		}
	}
	testwait.For(t, 20*time.Second, "every exit to be published", func() bool {
		doc := s.list()
		for pgid := range want {
			g, ok := findGroup(doc, pgid)
			if !ok || g.State != "settled" || g.Signal == "" {
				return false
			}
		}
		return true
	})
	doc = s.list()
	for pgid, wantSig := range map[int]string{pipe: "SIGTERM", writer: "SIGTERM", stubborn: "SIGKILL"} {
		if g, _ := findGroup(doc, pgid); g.Signal != wantSig {
			t.Errorf("group %d ended with %q, want %s", pgid, g.Signal, wantSig)
		}
	}
}
