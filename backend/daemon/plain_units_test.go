package daemon_test

import (
	"strconv"
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
	"sandtop/testwait"
)

// What a plain Start runs (an E2B SDK's command) is listed, although it
// shares the daemon's process group: the started process with its tag,
// and its children, as one unit under the started pid. A SignalGroup on
// that pid ends the unit member by member, children that outlived the
// started process included, and the daemon survives it.
func TestPlainStartIsListedAndEndedAsAUnit(t *testing.T) {
	forEachTransport(t, daemon.Config{}, func(t *testing.T, env *daemontest.Env, c *envd.Client) {
		req := startReq("sh", "-c", "sleep 300 & sleep 300 & echo ready; wait")
		tag := "sdk-job"
		req.Tag = &tag
		pid, s := startBg(t, c, req)
		var unit *sandtopv1.Group
		testwait.For(t, 10*time.Second, "the unit with its two children", func() bool {
			unit = findGroup(t, c, pid)
			return unit != nil && len(unit.GetMembers()) == 3
		})
		if unit.GetTag() != tag || unit.GetStartedPid() != pid {
			t.Errorf("unit = tag %q started %d, want %q %d", unit.GetTag(), unit.GetStartedPid(), tag, pid)
		}
		// Killing the started shell alone, as the SDK's kill does, orphans
		// its children to the daemon; they stay in the unit.
		if _, err := c.Process.SendSignal(ctxFor(t, 10*time.Second), connect.NewRequest(&process.SendSignalRequest{
			Process: bySel(pid), Signal: process.Signal_SIGNAL_SIGKILL,
		})); err != nil {
			t.Fatal(err)
		}
		if r, err := drainStart(s); err != nil || r.end == nil {
			t.Fatalf("the shell's stream: %v, end %v", err, r.end)
		}
		unit = findGroup(t, c, pid)
		if unit == nil || len(unit.GetMembers()) != 2 {
			t.Fatalf("after the shell ended, unit %d = %v; want its two sleeps", pid, unit)
		}
		signalUnitOf(t, c, pid, 9)
		testwait.For(t, 10*time.Second, "an empty unit", func() bool {
			u := findGroup(t, c, pid)
			return u == nil || !anyLive(u)
		})
		if _, err := c.Supervisor.Hello(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.HelloRequest{})); err != nil {
			t.Fatalf("the daemon after the unit's teardown: %v", err)
		}
	})
}

func findGroup(t *testing.T, c *envd.Client, pgid uint32) *sandtopv1.Group {
	t.Helper()
	res, err := c.Supervisor.ListGroups(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range res.Msg.GetGroups() {
		if g.GetPgid() == pgid {
			return g
		}
	}
	return nil
}

func signalUnitOf(t *testing.T, c *envd.Client, pgid uint32, sig int32) {
	t.Helper()
	if _, err := c.Supervisor.SignalGroup(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: pgid, Signal: sig})); err != nil {
		t.Fatalf("signal %d to unit %d: %v", sig, pgid, err)
	}
}

func anyLive(g *sandtopv1.Group) bool {
	for _, m := range g.GetMembers() {
		if st := m.GetState(); st != "Z" && st != "X" && st != "" {
			return true
		}
	}
	return false
}

// A daemon that owns its process (sandtop serve) lists what a plain
// Start left behind, as an SDK's "server &" does: the orphan is
// reparented to the daemon and listed as a unit of its own, which a
// SignalGroup ends.
func TestPlainStartOrphanIsListed(t *testing.T) {
	c, _ := startChildDaemon(t)
	r := run(t, c, startReq("sh", "-c", "sleep 300 >/dev/null 2>&1 & echo $!"))
	orphan, err := strconv.Atoi(strings.TrimSpace(r.stdout.String()))
	if err != nil {
		t.Fatalf("the orphan's pid: %q", r.stdout.String())
	}
	t.Cleanup(func() { _ = syscall.Kill(orphan, syscall.SIGKILL) })
	var unit *sandtopv1.Group
	testwait.For(t, 10*time.Second, "the orphan's unit", func() bool {
		unit = findGroup(t, c, uint32(orphan))
		return unit != nil
	})
	if unit.GetOrigin() != "envd" || len(unit.GetMembers()) != 1 || unit.GetMembers()[0].GetPid() != uint32(orphan) {
		t.Fatalf("the orphan's unit = %v", unit)
	}
	signalUnitOf(t, c, uint32(orphan), 9)
	testwait.For(t, 10*time.Second, "the orphan's end", func() bool { return !alive(orphan) })
}
