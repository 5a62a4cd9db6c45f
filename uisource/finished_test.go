package uisource

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"sandtop/backend"
	"sandtop/backend/daemon"
	"sandtop/ui"
)

// A job that failed is listed after it is gone, settled, with its code, on
// both control planes.
func TestSourceListsFinishedGroups(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			src, _ := newTestSource(t, daemon.Config{Compat: compat}, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pgid, err := src.Spawn(ctx, []string{"sh", "-c", "sleep 5; exit 3"}, "")
			if err != nil {
				t.Fatal(err)
			}
			// Seen live first (polls under load can be seconds apart), so its
			// argv is remembered for the finished row.
			nextSnapshotWhere(t, watch, "the job running", func(s ui.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && !g.Settled && len(g.Argv) > 0
			})
			s := nextSnapshotWhere(t, watch, "the job finished with exit 3", func(s ui.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && g.Settled && g.Exit != nil && g.Exit.Code == 3
			})
			g := findGroup(s, pgid)
			if g.Origin != ui.OriginSandtop || g.Command() != `sh -c "sleep 5; exit 3"` || len(g.Members) != 0 {
				t.Errorf("finished group = %+v (command %q); want ours, its argv, no members", *g, g.Command())
			}
		})
	}
}

// An agent's published groups (DeepSeek Harness layout under
// <cwd>/.dsh-e2b) are marked "agent": a live one in the table, a finished
// one settled with its code.
func TestSourceMarksAgentGroups(t *testing.T) {
	cwd := t.TempDir()
	src, _ := newTestSource(t, daemon.Config{}, Options{Cwd: cwd})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	live := exec.Command("sleep", "30")
	live.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	done := exec.Command("true")
	done.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	root := backend.DshRoot(cwd)
	publish := func(id string, files map[string]string) {
		dir := filepath.Join(root, "processes", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	publish("0b7a4c1e-0000-4000-8000-000000000001", map[string]string{"pid": strconv.Itoa(live.Process.Pid)})
	publish("0b7a4c1e-0000-4000-8000-000000000002", map[string]string{"pid": strconv.Itoa(done.Process.Pid), "exit-code": "7"})

	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nextSnapshotWhere(t, watch, "the agent's live and finished groups", func(s ui.Snapshot) bool {
		l, d := findGroup(s, live.Process.Pid), findGroup(s, done.Process.Pid)
		return l != nil && l.Origin == ui.OriginAgent && !l.Settled &&
			d != nil && d.Origin == ui.OriginAgent && d.Settled && d.Exit != nil && d.Exit.Code == 7
	})
}

// The table keeps the most recent finished groups only.
func TestPublishedFinishedAreBounded(t *testing.T) {
	p := newPublishedState()
	var infos []backend.GroupInfo
	code := 1
	for i := range maxFinished + 10 {
		infos = append(infos, backend.GroupInfo{ID: strconv.Itoa(i), StateDir: "/r/processes/" + strconv.Itoa(i), Pgid: 1000 + i, State: backend.GroupSettled, ExitCode: &code})
	}
	p.groups = mergePublished(nil, infos, false, time.Now())
	groups, _ := p.addPublished(nil, map[int]string{})
	if len(groups) != maxFinished {
		t.Fatalf("%d finished groups shown, want %d", len(groups), maxFinished)
	}
	for _, g := range groups {
		if g.PGID < 1010 || !g.Settled {
			t.Fatalf("kept %+v; want the %d newest, settled", g, maxFinished)
		}
	}
}

// A job that ended before the TUI ever saw it live still shows its command:
// the wrapper keeps it in the state directory.
func TestSourceNamesAJobThatEndedUnseen(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			src, _ := newTestSource(t, daemon.Config{Compat: compat}, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pgid, err := src.Spawn(ctx, []string{"sh", "-c", "exit 4"}, "")
			if err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(30 * time.Second)
			for settled := false; !settled; {
				infos, err := src.rt.ListGroups(ctx)
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range infos {
					settled = settled || (g.Pgid == pgid && g.State == backend.GroupSettled)
				}
				if time.Now().After(deadline) {
					t.Fatal("the job never settled")
				}
				time.Sleep(20 * time.Millisecond)
			}
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := nextSnapshotWhere(t, watch, "the finished job", func(s ui.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && g.Settled && g.Exit != nil && g.Exit.Code == 4
			})
			if g := findGroup(s, pgid); g.Command() != `sh -c "exit 4"` {
				t.Fatalf("finished job unseen live lists command %q", g.Command())
			}
		})
	}
}

// Published state is scanned every scanEvery (agents' roots every
// agentScanEvery) while the live table stays the same, but a group leaving
// it (or losing its leader) brings both scans forward, so its exit status
// shows within scanGap.
func TestLiveTableChangeBringsTheScanForward(t *testing.T) {
	p := newPublishedState()
	now := time.Now()
	p.lastOwn, p.ownTook, p.nextOwn = now, 10*time.Millisecond, now.Add(scanEvery)
	running := []ui.Group{{PGID: 7, Members: []ui.Process{{PID: 7, State: "S"}}}}
	p.addPublished(running, map[int]string{})
	<-p.kick // the first table is a change
	p.nextOwn = now.Add(scanEvery)
	p.addPublished(running, map[int]string{})
	select {
	case <-p.kick:
		t.Fatal("an unchanged table brought the scan forward")
	default:
	}
	p.lastAgent, p.agentTook, p.nextAgent = now, 10*time.Millisecond, now.Add(agentScanEvery)
	leaderGone := []ui.Group{{PGID: 7, Members: []ui.Process{{PID: 7, State: "Z"}, {PID: 8, State: "S"}}}}
	p.addPublished(leaderGone, map[int]string{})
	select {
	case <-p.kick:
	default:
		t.Fatal("the leader's exit did not bring the scan forward")
	}
	if want := now.Add(scanGap); !p.nextOwn.Equal(want) || !p.nextAgent.Equal(want) {
		t.Fatalf("next scans at +%v and +%v (agents), want +%v", p.nextOwn.Sub(now), p.nextAgent.Sub(now), scanGap)
	}
	p.nextOwn = now.Add(scanEvery)
	p.addPublished(nil, map[int]string{})
	if len(p.kick) != 1 {
		t.Fatal("the group leaving the table did not bring the scan forward")
	}
}
