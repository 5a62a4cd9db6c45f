package seam

import (
	"context"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/sandbox"
	"sandtop/testwait"
)

// A spawn's tag is the daemon's Start tag (List, and the extension's
// ListGroups on the wrapper's group) and is kept in the state directory,
// so the published state reports it after the process exits and after a restart.
func TestSpawnTagReachesTheDaemonAndSurvivesARestart(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		const tag = "build: go test ./... 'ü'"
		spawn := func(script string) *Handle {
			h, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/sh", "-c", script}, Cwd: "/",
				Stdio: collectBoth(64), Grace: 200 * time.Millisecond, Tag: tag})
			if err != nil {
				t.Fatal(err)
			}
			return h
		}
		live := spawn("echo ready; sleep 1000")
		testwait.For(t, 10*time.Second, "ready", func() bool { return live.Collected.Stdout.ReadFrom(0).Text == "ready\n" })
		done := spawn("exit 5")
		wantExit(t, settle(t, done), 5)
		untagged := s.spawn(collectBoth(64), 200*time.Millisecond, nil, "/bin/true")
		wantExit(t, settle(t, untagged), 0)

		listed, err := s.proc.List(s.ctx(), connect.NewRequest(&process.ListRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		if got := tagOfPid(listed.Msg.GetProcesses(), live.StartPid()); got != tag {
			t.Fatalf("List shows tag %q for the wrapper", got)
		}
		if !s.compat {
			res, err := s.sup.ListGroups(s.ctx(), connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, g := range res.Msg.GetGroups() {
				found = found || int(g.GetStartedPid()) == live.StartPid() && g.GetTag() == tag
			}
			if !found {
				t.Fatal("the extension's ListGroups does not show the tag on the wrapper's group")
			}
		}

		// A second runtime stands for sandtop after a restart.
		rt2, err := NewRuntimeClients(s.ctx(), s.proc, s.sup, RuntimeConfig{RuntimeRoot: s.d.RuntimeRoot, Cwd: "/", PollInterval: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		groups, err := rt2.listGroups(s.ctx())
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{live.ID(): tag, done.ID(): tag, untagged.ID(): ""}
		for _, g := range groups {
			if w, ok := want[g.ID]; ok {
				if g.Tag != w || g.Origin != sandbox.OriginSandtop {
					t.Fatalf("group %s (%s, %s): tag %q, want %q", g.ID, g.State, g.Origin, g.Tag, w)
				}
				delete(want, g.ID)
			}
		}
		if len(want) != 0 {
			t.Fatalf("groups not listed: %v", want)
		}
		terminateAndProve(t, s, live)
	})
}

func TestSpawnRejectsAMultiLineTagBeforeAnyWork(t *testing.T) {
	s := newSeam(t, false, nil)
	for _, tag := range []string{"a\nb", "nul\x00", strings.Repeat("x", MaxTagBytes+1)} {
		_, err := s.rt.Spawn(context.Background(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/",
			Stdio: collectBoth(8), Grace: 100 * time.Millisecond, Tag: tag})
		if err == nil || !strings.Contains(err.Error(), "tag") {
			t.Fatalf("tag %q: %v", tag, err)
		}
	}
	if n := s.wire.count("Start:wrapper", "Start:probe", "Start:other"); n != 0 {
		t.Fatalf("%d Start calls for rejected specs", n)
	}
}

func tagOfPid(ps []*process.ProcessInfo, pid int) string {
	for _, p := range ps {
		if int(p.GetPid()) == pid {
			return p.GetTag()
		}
	}
	return ""
}
