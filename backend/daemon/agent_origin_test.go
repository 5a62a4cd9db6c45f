package daemon_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/testwait"
)

// An agent provider's wrapper, started through a plain Start, leads its own
// group under the Start pid; ListGroups and WatchGroups mark that group
// origin "agent" with the state directory its argv names.
func TestAgentWrapperGroupIsMarked(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	dir := "/home/user/workspace/.dsh-e2b/processes/1f2e3d4c-0000-4000-8000-000000000001"
	pid, _ := startBg(t, c, startReq("setsid", "--wait", "--", "bash", "-c", "sleep 100; exit", "dsh-e2b", dir))
	// Plain sandtop-less groups carry no origin.
	other, _ := startBg(t, c, startReq("setsid", "sleep", "100"))

	var g *sandtopv1.Group
	testwait.For(t, 5*time.Second, "the agent's group marked in ListGroups", func() bool {
		g = groupOf(t, c, pid)
		return g != nil && g.GetOrigin() == "agent"
	})
	if g.GetStateDir() != dir {
		t.Errorf("state_dir %q, want %q", g.GetStateDir(), dir)
	}
	if o := groupOf(t, c, other); o == nil || o.GetOrigin() != "" || o.GetStateDir() != "" {
		t.Errorf("a plain group: %v", o)
	}

	w, err := c.Supervisor.WatchGroups(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.WatchGroupsRequest{IntervalMs: 100}))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if !w.Receive() {
		t.Fatalf("no snapshot: %v", w.Err())
	}
	for _, g := range w.Msg().GetGroups() {
		if g.GetPgid() == pid {
			if g.GetOrigin() != "agent" || g.GetStateDir() != dir {
				t.Errorf("WatchGroups: origin %q state_dir %q", g.GetOrigin(), g.GetStateDir())
			}
			return
		}
	}
	t.Errorf("WatchGroups lacks group %d", pid)
}
