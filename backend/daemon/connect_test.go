package daemon_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/testwait"
)

// The process prints "early", waits for a marker file, prints "late", exits 5.
// Two clients connect in between: each must see the replay ("early"), then
// the live part ("late"), then the end, with nothing lost or repeated.
func TestConnectReplaysThenGoesLive(t *testing.T) {
	forEachTransport(t, daemon.Config{}, func(t *testing.T, env *daemontest.Env, c *envd.Client) {
		gate := env.RuntimeRoot + "/gate"
		script := fmt.Sprintf("i=0; while [ $i -lt 50 ]; do echo early$i; i=$((i+1)); done; "+
			"while [ ! -e %s ]; do sleep 0.01; done; echo late; echo lateerr >&2; exit 5", gate)
		pid, s := startBg(t, c, startReq("sh", "-c", script))
		s.Close() // the process outlives its Start stream

		var early strings.Builder
		for i := 0; i < 50; i++ {
			fmt.Fprintf(&early, "early%d\n", i)
		}
		// Wait until all early output is in the replay ring (via a probe Connect).
		testwait.For(t, 10*time.Second, "early output in the ring", func() bool {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			cs, err := c.Process.Connect(ctx, connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}}))
			if err != nil {
				return false
			}
			defer cs.Close()
			var got strings.Builder
			for cs.Receive() {
				got.Write(cs.Msg().GetEvent().GetData().GetStdout())
				if got.Len() >= early.Len() {
					break
				}
			}
			return got.String() == early.String()
		})

		var wg sync.WaitGroup
		results := make([]*result, 2)
		errs := make([]error, 2)
		opened := make(chan struct{}, 2)
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cs, err := c.Process.Connect(ctxFor(t, 30*time.Second), connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}}))
				if err != nil {
					errs[i] = err
					opened <- struct{}{}
					return
				}
				defer cs.Close()
				r := &result{}
				for cs.Receive() {
					r.add(cs.Msg().GetEvent())
					if r.stdout.Len() == early.Len() && len(opened) < 2 && r.starts == 1 {
						opened <- struct{}{}
					}
				}
				results[i], errs[i] = r, cs.Err()
			}()
		}
		for range 2 {
			select {
			case <-opened:
			case <-time.After(10 * time.Second):
				t.Fatal("connect streams did not replay the early output")
			}
		}
		touch(t, gate)
		wg.Wait()
		for i, r := range results {
			if errs[i] != nil {
				t.Fatalf("client %d: %v", i, errs[i])
			}
			if want := early.String() + "late\n"; r.stdout.String() != want {
				t.Errorf("client %d stdout = %q, want %q", i, r.stdout.String(), want)
			}
			if r.stderr.String() != "lateerr\n" {
				t.Errorf("client %d stderr = %q", i, r.stderr.String())
			}
			if r.end == nil || r.end.GetExitCode() != 5 || r.pid != pid {
				t.Errorf("client %d: pid %d end %v", i, r.pid, r.end)
			}
		}

		// After exit: start and end (and the retained output) still come back.
		cs, err := c.Process.Connect(ctxFor(t, 10*time.Second), connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}}))
		if err != nil {
			t.Fatal(err)
		}
		r, err := drainConnect(cs)
		if err != nil {
			t.Fatal(err)
		}
		if r.starts != 1 || r.pid != pid || r.end == nil || r.end.GetExitCode() != 5 {
			t.Errorf("connect after exit: starts %d pid %d end %v", r.starts, r.pid, r.end)
		}
	})
}

func TestListTagsAndTagLookup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	pids := map[string]uint32{}
	for _, tag := range []string{"alpha", "beta", "gamma"} {
		req := startReq("sh", "-c", "echo I am "+tag+"; sleep 100")
		req.Tag = &tag
		pid, _ := startBg(t, c, req)
		pids[tag] = pid
	}
	untagged, _ := startBg(t, c, startReq("sleep", "100"))

	res, err := c.Process.List(ctxFor(t, 5*time.Second), connect.NewRequest(&process.ListRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	gotTags := map[uint32]string{}
	for _, p := range res.Msg.GetProcesses() {
		gotTags[p.GetPid()] = p.GetTag()
		if p.GetConfig().GetCmd() == "" {
			t.Errorf("pid %d: config missing", p.GetPid())
		}
	}
	for tag, pid := range pids {
		if gotTags[pid] != tag {
			t.Errorf("List: pid %d tag %q, want %q", pid, gotTags[pid], tag)
		}
	}
	if _, ok := gotTags[untagged]; !ok {
		t.Errorf("List misses untagged pid %d", untagged)
	}
	// Every tag resolves to its own process, whatever the map order.
	for tag, pid := range pids {
		cs, err := c.Process.Connect(ctxFor(t, 10*time.Second), connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Tag{Tag: tag}}}))
		if err != nil {
			t.Fatalf("connect tag %s: %v", tag, err)
		}
		if !cs.Receive() || cs.Msg().GetEvent().GetStart().GetPid() != pid {
			t.Errorf("tag %s: connected to %v, want pid %d", tag, cs.Msg(), pid)
		}
		cs.Close()
	}
	_, err = c.Process.SendSignal(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendSignalRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Tag{Tag: "nope"}}, Signal: process.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeNotFound, `process with tag "nope" not found`)
}
