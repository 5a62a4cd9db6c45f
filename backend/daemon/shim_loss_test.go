package daemon_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/shim"
	"sandtop/groupstate"
	"sandtop/testwait"
)

// A program can reach its shim (kill $PPID) and an operator its session
// (kill -TERM -SHIM): the shim catches TERM, INT, HUP, QUIT, USR1 and runs
// on, while the program keeps the default dispositions and no descriptor
// of the shim's.
func TestShimSurvivesSignals(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := startInSessionDir(ctx, t, env, "g", startReq("bash", "-c",
		"for s in TERM INT HUP QUIT USR1; do kill -$s $PPID; done; echo sent; exec sleep 1000"))
	t.Cleanup(func() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) })
	sh := parentOf(t, g.pid)
	before, err := shim.StartTicks(sh)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for !strings.Contains(out.String(), "sent") && g.stream.Receive() {
		out.Write(g.stream.Msg().GetEvent().GetData().GetStdout())
	}
	if err := syscall.Kill(-sh, syscall.SIGTERM); err != nil { // the shim's own group
		t.Fatalf("signal the shim's group: %v", err)
	}
	// Every signal sent has been taken once none is pending.
	testwait.For(t, 10*time.Second, "the shim to take its signals", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", sh))
		return err != nil || strings.Contains(string(b), "SigPnd:\t0000000000000000\nShdPnd:\t0000000000000000")
	})
	if after, err := shim.StartTicks(sh); err != nil || after != before {
		t.Fatalf("the shim %d did not survive TERM, INT, HUP, QUIT and USR1 (start ticks %d, now %d, %v)", sh, before, after, err)
	}
	// sleep has replaced bash: only its stdio is open.
	testwait.For(t, 10*time.Second, "bash to exec sleep", func() bool {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", g.pid))
		return strings.TrimSpace(string(b)) == "sleep"
	})
	// comm reads "sleep" a moment before the exec has closed bash's
	// close-on-exec descriptors, so the list is read until it settles: a
	// descriptor the program inherited stays for good.
	var names []string
	settled := func() bool {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", g.pid))
		if err != nil {
			return false
		}
		names = names[:0]
		for _, e := range fds {
			names = append(names, e.Name())
		}
		return slices.Equal(names, []string{"0", "1", "2"})
	}
	testwait.NoError(t, 5*time.Second, func() error {
		if !settled() {
			return fmt.Errorf("the program inherited descriptors %v; want only 0 1 2", names)
		}
		return nil
	})
	// TERM still ends the program: it was not handed an ignored one.
	signalGroup(t, env.Client, g.pid, syscall.SIGTERM)
	for g.stream.Receive() {
		if end := g.stream.Msg().GetEvent().GetEnd(); end != nil {
			if end.GetStatus() != "signal: terminated" {
				t.Fatalf("the program ended with %q, want signal: terminated", end.GetStatus())
			}
			return
		}
	}
	t.Fatalf("no end event: %v", g.stream.Err())
}

// Shims are bookkeeping: neither a group's shim nor the spare can be
// signalled through the API, by group or by pid; the program's group can.
func TestShimsAreNotSignallable(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := startInSessionDir(ctx, t, env, "g", startReq("sleep", "1000"))
	t.Cleanup(func() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) })
	sh := parentOf(t, g.pid)
	spare := waitForSpare(t, env.Daemon)
	for _, pid := range []int{sh, spare} {
		_, err := env.Client.Supervisor.SignalGroup(ctx, connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: uint32(pid), Signal: int32(syscall.SIGKILL)}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "shim") {
			t.Fatalf("SignalGroup on shim %d: %v, want invalid_argument naming the shim", pid, err)
		}
		_, err = env.Client.Process.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{
			Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(pid)}},
			Signal:  process.Signal_SIGNAL_SIGKILL,
		}))
		if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "shim") {
			t.Fatalf("SendSignal on shim %d: %v, want invalid_argument naming the shim", pid, err)
		}
	}
	if err := syscall.Kill(sh, 0); err != nil {
		t.Fatalf("the shim %d is gone: %v", sh, err)
	}
	signalGroup(t, env.Client, g.pid, syscall.SIGKILL)
	if out := g.drain(); out != "" {
		t.Fatalf("sleep printed %q", out)
	}
}

// A group whose shim is killed (SIGKILL cannot be caught) is a plain group
// of the sandbox: listed with its state directory, command and live
// members, by a pgid lookup too, and signallable, while this daemon lives
// and after another takes over the runtime root; a teardown empties it.
func TestKilledShimLeavesAPlainGroup(t *testing.T) {
	root := filepath.Join(t.TempDir(), "runtime")
	env := daemontest.Start(t, daemon.Config{RuntimeRoot: root})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	argv := []string{"bash", "-c", "sleep 1000 | sleep 1001"}
	g := startInSessionDir(ctx, t, env, "g", startReq(argv[0], argv[1:]...))
	t.Cleanup(func() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) })
	dir := filepath.Join(env.RuntimeRoot, "processes", "g")
	sh := parentOf(t, g.pid)
	if err := syscall.Kill(sh, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// The stream ends: nothing reports this group's output or exit now.
	g.drain()

	check := func(c *envd.Client, when string) {
		t.Helper()
		var got *sandtopv1.Group
		testwait.For(t, 10*time.Second, "the group listed "+when, func() bool {
			res, err := c.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{Pgid: uint32(g.pid)}))
			if err != nil {
				t.Fatal(err)
			}
			got = nil
			if gs := res.Msg.GetGroups(); len(gs) == 1 {
				got = gs[0]
			}
			return got != nil && liveMembers(got) == 3 && got.GetStateDir() == dir
		})
		if !slices.Equal(got.GetArgv(), argv) || got.GetOrigin() != "sandtop" {
			t.Fatalf("%s: the group is listed with argv %q, origin %q", when, got.GetArgv(), got.GetOrigin())
		}
		found := false
		for _, lg := range groupsOf(t, c) {
			found = found || int(lg.GetPgid()) == g.pid && lg.GetStateDir() == dir
		}
		if !found {
			t.Fatalf("%s: the full listing lacks group %d", when, g.pid)
		}
		// Signallable: a null signal is delivered.
		signalGroup(t, c, g.pid, 0)
	}
	check(env.Client, "while the daemon lives")

	if err := env.Daemon.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	env2 := daemontest.Start(t, daemon.Config{RuntimeRoot: root})
	check(env2.Client, "after a restart")

	signalGroup(t, env2.Client, g.pid, syscall.SIGTERM)
	res, err := env2.Client.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{Pgid: uint32(g.pid), WaitEmptyMs: 10000}))
	if err != nil {
		t.Fatal(err)
	}
	for _, lg := range res.Msg.GetGroups() {
		if liveMembers(lg) > 0 {
			t.Fatalf("the group still has live members after SIGTERM: %v", lg.GetMembers())
		}
	}
	// The orphaned leader was this process's child to reap: its exit is
	// published in the shim's place.
	testwait.For(t, 10*time.Second, "the leader's exit published", func() bool {
		code, _ := os.ReadFile(filepath.Join(dir, "exit-code"))
		sig, _ := os.ReadFile(filepath.Join(dir, "signal"))
		return string(code) == "143\n" && string(sig) == "15\n"
	})
}

func liveMembers(g *sandtopv1.Group) int {
	n := 0
	for _, m := range g.GetMembers() {
		if groupstate.ProcLive(m.GetState()) {
			n++
		}
	}
	return n
}

func signalGroup(t *testing.T, c *envd.Client, pgid int, sig syscall.Signal) {
	t.Helper()
	if sig == 0 {
		// SignalGroup takes 1..64; a null signal is its check alone.
		sig = syscall.SIGCONT
	}
	if _, err := c.Supervisor.SignalGroup(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: uint32(pgid), Signal: int32(sig)})); err != nil {
		t.Fatalf("signal %v to group %d: %v", sig, pgid, err)
	}
}

// A shim's socket takes only its daemon: another process of the same user
// that connects, with no key or a wrong one, gets no hello and is dropped,
// and the daemon keeps the group's output.
func TestShimRefusesAForeignConnection(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	g := startInSessionDir(ctx, t, env, "g", startReq("bash", "-c", "while :; do echo tick; sleep 0.05; done"))
	t.Cleanup(func() { _ = syscall.Kill(-g.pid, syscall.SIGKILL) })
	tick := func(when string) {
		t.Helper()
		for g.stream.Receive() {
			if strings.Contains(string(g.stream.Msg().GetEvent().GetData().GetStdout()), "tick") {
				return
			}
		}
		t.Fatalf("%s: the daemon's stream ended: %v", when, g.stream.Err())
	}
	tick("before")
	dir, err := os.Open(filepath.Join(env.RuntimeRoot, "processes", "g"))
	if err != nil {
		t.Fatal(err)
	}
	defer dir.Close()
	sock := fmt.Sprintf("/proc/self/fd/%d/%s", dir.Fd(), "shim.sock")
	testwait.For(t, 10*time.Second, "the shim's socket", func() bool { _, err := os.Stat(sock); return err == nil })
	for _, c := range []struct {
		name  string
		frame []byte
	}{
		{"a wrong key", append([]byte{shim.FrameAuth, 0, 0, 0, 64}, strings.Repeat("0", 64)...)},
		{"a spec frame", []byte{shim.FrameSpec, 0, 0, 0, 2, '{', '}'}},
		{"nothing", nil},
	} {
		conn, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		if c.frame != nil {
			if _, err := conn.Write(c.frame); err != nil {
				t.Fatal(err)
			}
		}
		_ = conn.SetReadDeadline(time.Now().Add(15 * time.Second))
		kind, _, err := shim.ReadFrame(conn)
		_ = conn.Close()
		if err == nil {
			t.Fatalf("a connection that sent %s got frame %d", c.name, kind)
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("a connection that sent %s was kept open", c.name)
		}
		tick("after a connection that sent " + c.name)
	}
}
