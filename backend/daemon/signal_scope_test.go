package daemon_test

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"

	"sandtop/testwait"
)

// SignalGroup used to accept any pgid above 1 but the daemon's own: a
// client could kill a process the sandbox never started. It now reaches
// only the groups the daemon lists.
func TestSignalGroupReachesOnlyTheSandboxsGroups(t *testing.T) {
	// A standalone daemon, so that a process this test starts is not its
	// descendant.
	c, _ := startChildDaemon(t)
	foreign := exec.Command("sleep", "778")
	// Dies with the test binary, even when go test's timeout kills it.
	foreign.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = foreign.Process.Kill(); _ = foreign.Wait() })
	pgid := uint32(foreign.Process.Pid)

	_, err := c.Supervisor.SignalGroup(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: pgid, Signal: int32(syscall.SIGTERM)}))
	wantCode(t, err, connect.CodePermissionDenied, "is not in this sandbox")
	if !alive(foreign.Process.Pid) {
		t.Fatal("the foreign process was signalled")
	}

	// A group of the daemon's child is signalled as before (a plain Start
	// stays in the daemon's group, as in envd, so the child makes its own).
	own, _ := startBg(t, c, startReq("setsid", "sleep", "100"))
	testwait.For(t, 10*time.Second, "setsid to have run", func() bool {
		pgid, err := syscall.Getpgid(int(own))
		return err == nil && pgid == int(own)
	})
	res, err := c.Supervisor.SignalGroup(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: own, Signal: int32(syscall.SIGTERM)}))
	if err != nil || !res.Msg.GetDelivered() {
		t.Fatalf("own group: delivered=%v err=%v", res.Msg.GetDelivered(), err)
	}
	// A group with no member is not an error: nothing is delivered.
	res, err = c.Supervisor.SignalGroup(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: 1 << 22, Signal: int32(syscall.SIGTERM)}))
	if err != nil || res.Msg.GetDelivered() {
		t.Fatalf("empty group: delivered=%v err=%v", res.Msg.GetDelivered(), err)
	}
}
