package seam

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// A group whose shim an operator killed (kill -9) is still the sandbox's:
// listed running with its command, in the snapshot too, and once its
// leader has gone too, leader-exited with the leader's exit (which the
// daemon's process reaped and published in the shim's place); prune keeps
// its state; a teardown proves it empty, and it then lists settled with its
// command.
func TestGroupWhoseShimWasKilled(t *testing.T) {
	s := newSeam(t, false, nil)
	argv := []string{"bash", "-c", "sleep 1000 | sleep 1001"}
	h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputPipe()}, 100*time.Millisecond, nil, argv...)
	pgid := h.Pid()
	t.Cleanup(func() { _ = unix.Kill(-pgid, unix.SIGKILL) })
	// A second runtime, as after sandtop's restart: it holds no handle, so
	// prune may judge the group.
	rt2, err := NewRuntimeClients(s.ctx(), s.proc, s.sup, RuntimeConfig{RuntimeRoot: s.d.RuntimeRoot, Cwd: "/", PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	find := func() PublishedGroup {
		t.Helper()
		groups, err := rt2.listGroups(s.ctx())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if g.Pgid == pgid {
				return g
			}
		}
		return PublishedGroup{}
	}
	shimPid := testwait.Value(t, 20*time.Second, func() (int, error) {
		b, err := os.ReadFile(filepath.Join(find().StateDir, wrapper.SupervisorFile))
		if err != nil {
			return 0, err
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			if pid, _ := strconv.Atoi(f[0]); pid > 1 {
				return pid, nil
			}
		}
		return 0, fmt.Errorf("supervisor file %q names no pid", b)
	})
	// The pipeline runs, then the shim is killed and the leader too: the
	// two sleeps are left, with no leader.
	testwait.For(t, 20*time.Second, "the pipeline's three members", func() bool {
		snap, err := rt2.Snapshot(s.ctx(), WatchOptions{})
		v, ok := snapshotGroup(snap, pgid)
		return err == nil && ok && liveOf(v) == 3
	})
	if err := unix.Kill(shimPid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Listed as before, the command now from the daemon's record, which
	// it writes once it has noticed the shim is gone: the snapshot may show
	// the argv before that, so the published record is waited for too.
	testwait.NoError(t, 20*time.Second, func() error {
		snap, err := rt2.Snapshot(s.ctx(), WatchOptions{})
		v, ok := snapshotGroup(snap, pgid)
		if g := find(); err != nil || !ok || liveOf(v) != 3 || !slices.Equal(v.Argv, argv) || g.State != groupstate.Running || !slices.Equal(g.Argv, argv) {
			return fmt.Errorf("with its shim killed: listed %+v (snapshot argv %q), want running with %q from the daemon's record", g, v.Argv, argv)
		}
		return nil
	})
	if err := unix.Kill(pgid, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var g PublishedGroup
	testwait.NoError(t, 20*time.Second, func() error {
		g = find()
		snap, err := rt2.Snapshot(s.ctx(), WatchOptions{})
		if v, ok := snapshotGroup(snap, pgid); err == nil && ok && g.State == groupstate.LeaderExited && liveOf(v) == 2 && slices.Equal(v.Argv, argv) {
			return nil
		}
		return fmt.Errorf("with its shim and leader killed: listed %+v, want leader-exited with two live members", g)
	})
	// The daemon's process reaped the orphaned leader and published its
	// exit in the shim's place; its members live on.
	if g.State != groupstate.LeaderExited || g.Signal != "SIGKILL" || !slices.Equal(g.Argv, argv) {
		t.Fatalf("with its shim and leader killed: %+v, want leader-exited (SIGKILL) with %q", g, argv)
	}
	snap, err := rt2.Snapshot(s.ctx(), WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := snapshotGroup(snap, pgid); !ok || liveOf(v) != 2 || !slices.Equal(v.Argv, argv) || v.StateDir != g.StateDir {
		t.Fatalf("the snapshot shows %+v (found %v), want two live members, %q and %s", v, ok, argv, g.StateDir)
	}
	if _, err := rt2.PruneFinished(s.ctx(), time.Time{}, false); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(g.StateDir, wrapper.PidFile)); err != nil {
		t.Fatalf("prune removed the state of the live group: %v", err)
	}
	if err := rt2.TeardownGroup(s.ctx(), pgid, time.Second, nil); err != nil {
		t.Fatalf("teardown: %v", err)
	}
	testwait.For(t, 20*time.Second, "the group settled", func() bool { g = find(); return g.State == groupstate.Settled })
	if g.State != groupstate.Settled || !slices.Equal(g.Argv, argv) || g.Signal != "SIGKILL" || g.Problem != "" {
		t.Fatalf("after the teardown: %+v, want settled with %q and the leader's SIGKILL", g, argv)
	}
}

func snapshotGroup(s sandbox.Snapshot, pgid int) (sandbox.Group, bool) {
	for _, g := range s.Groups {
		if g.PGID == pgid {
			return g, true
		}
	}
	return sandbox.Group{}, false
}

func liveOf(g sandbox.Group) int {
	n := 0
	for _, m := range g.Members {
		if groupstate.ProcLive(m.State) {
			n++
		}
	}
	return n
}
