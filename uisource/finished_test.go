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

	"sandtop/backend/daemon"
	"sandtop/backend/seam"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
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
			nextSnapshotWhere(t, watch, "the job running", func(s sandbox.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && g.Live() && len(g.Argv) > 0
			})
			s := nextSnapshotWhere(t, watch, "the job finished with exit 3", func(s sandbox.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && !g.Live() && g.Exit != nil && g.Exit.Code == 3
			})
			g := findGroup(s, pgid)
			if g.Origin != sandbox.OriginSandtop || g.CommandLine() != `sh -c "sleep 5; exit 3"` || len(g.Members) != 0 {
				t.Errorf("finished group = %+v (command %q); want ours, its argv, no members", *g, g.CommandLine())
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
	// Dies with the test binary, even when go test's timeout kills it.
	live.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { live.Process.Kill(); live.Wait() })
	done := exec.Command("true")
	// Dies with the test binary, even when go test's timeout kills it.
	done.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	root := seam.AgentRoot(cwd)
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
	nextSnapshotWhere(t, watch, "the agent's live and finished groups", func(s sandbox.Snapshot) bool {
		l, d := findGroup(s, live.Process.Pid), findGroup(s, done.Process.Pid)
		return l != nil && l.Origin == sandbox.OriginAgent && l.Live() &&
			d != nil && d.Origin == sandbox.OriginAgent && !d.Live() && d.Exit != nil && d.Exit.Code == 7
	})
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
			testwait.For(t, 30*time.Second, "the job to settle", func() bool {
				snap, err := src.rt.Snapshot(ctx, seam.WatchOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, g := range snap.Groups {
					if g.PGID == pgid && g.State == groupstate.Settled {
						return true
					}
				}
				return false
			})
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			s := nextSnapshotWhere(t, watch, "the finished job", func(s sandbox.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && !g.Live() && g.Exit != nil && g.Exit.Code == 4
			})
			if g := findGroup(s, pgid); g.CommandLine() != `sh -c "exit 4"` {
				t.Fatalf("finished job unseen live lists command %q", g.CommandLine())
			}
		})
	}
}
