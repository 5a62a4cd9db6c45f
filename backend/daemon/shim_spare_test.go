package daemon_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
	"sandtop/testwait"
)

// After a session-dir Start the daemon has the next shim started ahead; the
// next group runs under exactly that one, with its stdin handed over.
func TestSpareShimRunsTheNextGroup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	first := startInSessionDir(ctx, t, env, "p1", startReq("true"))
	first.drain()
	spare := waitForSpare(t, env.Daemon)
	// The spare is no one's work: it is not listed as a group of its own.
	for _, g := range groupsOf(t, env.Client) {
		for _, m := range g.GetMembers() {
			if int(m.GetPid()) == spare {
				t.Fatalf("the spare shim %d is listed in group %d", spare, g.GetPgid())
			}
		}
	}

	withStdin := startReq("cat")
	withStdin.Stdin = nil // envd's default: a stdin pipe
	s := startInSessionDir(ctx, t, env, "p2", withStdin)
	defer s.stream.Close()
	if got := parentOf(t, s.pid); got != spare {
		t.Fatalf("the group's shim is %d, want the spare %d", got, spare)
	}
	if _, err := env.Client.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(s.pid)}},
		Input:   &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: []byte("through the spare\n")}},
	})); err != nil {
		t.Fatal(err)
	}
	if _, err := env.Client.Process.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(s.pid)}},
	})); err != nil {
		t.Fatal(err)
	}
	if out := s.drain(); out != "through the spare\n" {
		t.Fatalf("cat printed %q through the spare's stdin", out)
	}
	if next := waitForSpare(t, env.Daemon); next == spare {
		t.Fatalf("spare %d was not replaced", spare)
	}
}

// A spare that was killed while it waited costs nothing but time: the next
// Start gets a fresh shim.
func TestKilledSpareIsReplacedAtStart(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	startInSessionDir(ctx, t, env, "p1", startReq("true")).drain()
	spare := waitForSpare(t, env.Daemon)
	if err := unix.Kill(spare, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s := startInSessionDir(ctx, t, env, "p2", startReq("sleep", "30"))
	if shim := parentOf(t, s.pid); shim == spare || shim <= 1 {
		t.Fatalf("the group's parent is %d (the killed spare was %d)", shim, spare)
	}
	_ = unix.Kill(-s.pid, unix.SIGKILL)
	s.drain()
}

type startedGroup struct {
	stream interface {
		Receive() bool
		Msg() *process.StartResponse
		Err() error
		Close() error
	}
	pid int
}

func startInSessionDir(ctx context.Context, t *testing.T, env *daemontest.Env, name string, msg *process.StartRequest) *startedGroup {
	t.Helper()
	req := connect.NewRequest(msg)
	req.Header().Set(daemon.SessionDirHeader, filepath.Join(env.RuntimeRoot, "processes", name))
	s, err := env.Client.Process.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Receive() {
		t.Fatalf("no start event: %v", s.Err())
	}
	return &startedGroup{stream: s, pid: int(s.Msg().GetEvent().GetStart().GetPid())}
}

// drain reads the stream to its end and returns the stdout it carried.
func (g *startedGroup) drain() string {
	var out strings.Builder
	for g.stream.Receive() {
		if d := g.stream.Msg().GetEvent().GetData(); d != nil {
			out.Write(d.GetStdout())
		}
	}
	_ = g.stream.Close()
	return out.String()
}

func waitForSpare(t *testing.T, d *daemon.Daemon) int {
	t.Helper()
	var pid int
	testwait.For(t, 30*time.Second, "a spare shim", func() bool { pid = d.SparePid(); return pid != 0 })
	return pid
}

func parentOf(t *testing.T, pid int) int {
	t.Helper()
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	var state string
	var ppid int
	_, _ = fmt.Sscanf(string(st[strings.LastIndexByte(string(st), ')')+2:]), "%s %d", &state, &ppid)
	return ppid
}

// Waiting for a shim holds no OS thread: 60 running groups must not add
// anything like 60 threads to the daemon (os/exec's Wait would).
func TestShimsDoNotPinThreads(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	startInSessionDir(ctx, t, env, "warm", startReq("true")).drain()
	before := threads(t)
	var groups []*startedGroup
	for i := range 60 {
		groups = append(groups, startInSessionDir(ctx, t, env, fmt.Sprintf("g%d", i), startReq("sleep", "60")))
	}
	after := threads(t)
	for _, g := range groups {
		_ = unix.Kill(-g.pid, unix.SIGKILL)
		g.drain()
	}
	if after-before >= 30 {
		t.Fatalf("60 running groups took the daemon from %d to %d threads", before, after)
	}
}
