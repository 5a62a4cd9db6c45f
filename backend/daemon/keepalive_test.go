package daemon_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

func TestKeepaliveHeader(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	r := run(t, env.Dial(envd.WithKeepalive(1)), startReq("sleep", "2.5"))
	if r.keepalives < 1 {
		t.Errorf("got %d keepalives over 2.5 s with a 1 s interval", r.keepalives)
	}
	r = run(t, env.Client, startReq("sleep", "1.2")) // default 90 s: none
	if r.keepalives != 0 {
		t.Errorf("got %d keepalives with the default interval", r.keepalives)
	}
}

func TestWatchGroupsSeesNewGroup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	w, err := c.Supervisor.WatchGroups(ctxFor(t, 20*time.Second), connect.NewRequest(&sandtopv1.WatchGroupsRequest{IntervalMs: 100}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !w.Receive() {
		t.Fatalf("no first snapshot: %v", w.Err())
	}
	pid, _ := startBg(t, c, startReq("setsid", "sleep", "100")) // a plain start has no group of its own
	for w.Receive() {
		for _, g := range w.Msg().GetGroups() {
			if g.GetPgid() == pid && g.GetStartedPid() == pid {
				return
			}
		}
	}
	t.Fatalf("watch ended without showing group %d: %v", pid, w.Err())
}
