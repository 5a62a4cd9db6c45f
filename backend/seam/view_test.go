package seam

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// One Snapshot is the whole listing: on sandtop's daemon it reads the
// process table once; on stock envd it runs a bounded number of commands,
// however many groups there are. Either way the group shows what it was
// asked to run, its state and its members.
func TestSnapshotReadsTheSandboxOnce(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			s := newSeam(t, compat, nil)
			var hs []*Handle
			for range 3 {
				hs = append(hs, spawnReady(t, s, time.Second, `echo ready; exec sleep 1000`))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			// A second runtime on its own wire: the handles' own polling
			// does not count.
			wire := &wireLog{}
			hc := &http.Client{Transport: unixH2C(s.d.Socket)}
			opts := connect.WithInterceptors(wire)
			rt, err := NewRuntimeClients(ctx, processconnect.NewProcessClient(hc, "http://localhost", opts),
				sandtopv1connect.NewSupervisorClient(hc, "http://localhost", opts),
				RuntimeConfig{Cwd: t.TempDir(), PollInterval: 50 * time.Millisecond, RuntimeRoot: s.d.RuntimeRoot})
			if err != nil {
				t.Fatal(err)
			}
			startKinds := []string{"Start:wrapper", "Start:kill", "Start:ps", "Start:probe", "Start:rm", "Start:state", "Start:terminal", "Start:other"}
			lists, starts := wire.count("ListGroups"), wire.count(startKinds...)
			snap, err := rt.Snapshot(ctx, WatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if n := wire.count("ListGroups") - lists; !compat && n != 1 {
				t.Errorf("one snapshot read the process table %d times", n)
			}
			// One ps, the exact argv of the wrappers, our state dirs, agents'
			// roots: never one command per group.
			if n := wire.count(startKinds...) - starts; compat && n > 4 {
				wire.mu.Lock()
				t.Errorf("one snapshot of 3 groups ran %d commands: %v", n, wire.calls[len(wire.calls)-n:])
				wire.mu.Unlock()
			}
			for _, h := range hs {
				g := findView(snap, h.Pgid())
				if g == nil {
					t.Fatalf("group %d not in the snapshot", h.Pgid())
				}
				if g.State != groupstate.Running || g.Origin != sandbox.OriginSandtop || g.StateDir == "" || g.ID == "" || len(g.Members) == 0 {
					t.Errorf("group %d: %+v", h.Pgid(), *g)
				}
				if !slices.Equal(g.Argv, []string{"/bin/sh", "-c", `echo ready; exec sleep 1000`}) {
					t.Errorf("group %d runs %q", h.Pgid(), g.Argv)
				}
			}
			for _, h := range hs {
				terminateAndProve(t, s, h)
			}
		})
	}
}

// A finished group stays in the snapshot, settled, with its exit code and
// its command.
func TestSnapshotListsFinishedGroups(t *testing.T) {
	s := newSeam(t, false, nil)
	h := s.spawn(collectBoth(1024), time.Second, nil, "/bin/sh", "-c", "exit 6")
	pgid := h.Pgid()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var g *sandbox.Group
	testwait.For(t, 15*time.Second, "the group settled with its code", func() bool {
		snap, err := s.rt.Snapshot(ctx, WatchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		g = findView(snap, pgid)
		return g != nil && g.State == groupstate.Settled && g.Exit != nil
	})
	if g.Exit.Code != 6 || !slices.Equal(g.Argv, []string{"/bin/sh", "-c", "exit 6"}) || len(g.Members) != 0 {
		t.Fatalf("finished group: %+v", *g)
	}
}

// The seam's rule for a gone sandbox asks the target's recogniser (E2B's
// "sandbox not found"), so that every front-end judges it the same way.
func TestSandboxGoneAsksTheTargetsRecogniser(t *testing.T) {
	errGone := errors.New("sandbox not found")
	s := newSeam(t, false, func(_ *daemon.Config, rc *RuntimeConfig) {
		rc.SandboxGone = func(err error) bool { return errors.Is(err, errGone) }
	})
	if !s.rt.sandboxGone(fmt.Errorf("watch: %w", errGone)) {
		t.Error("the target's recogniser was not asked")
	}
	if s.rt.sandboxGone(errors.New("some other failure")) {
		t.Error("an unrelated error counted as a gone sandbox")
	}
}

func findView(s sandbox.Snapshot, pgid int) *sandbox.Group {
	for i := range s.Groups {
		if s.Groups[i].PGID == pgid {
			return &s.Groups[i]
		}
	}
	return nil
}

// A watch on sandtop's daemon shows finished groups from the published
// state, judged against the table the watch already holds: its scans never
// ask the daemon for another read of all of /proc.
func TestWatchJudgesPublishedStateAgainstItsOwnTable(t *testing.T) {
	s := newSeam(t, false, nil)
	h := s.spawn(collectBoth(1024), time.Second, nil, "/bin/sh", "-c", "exit 5")
	pgid := h.Pgid()
	waitTreeGone(t, h)
	<-h.Done() // the handle's own reads are over
	waitSettled(t, s, pgid)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lists := s.wire.count("ListGroups")
	w, err := s.rt.Watch(ctx, WatchOptions{Interval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for snap := range w.C() {
		if g := findView(snap, pgid); g != nil && g.Exit != nil {
			if g.Exit.Code != 5 || g.State != groupstate.Settled {
				t.Fatalf("finished group: %+v", *g)
			}
			if n := s.wire.count("ListGroups") - lists; n != 0 {
				t.Fatalf("the watch's scans read the process table %d more times", n)
			}
			return
		}
	}
	t.Fatalf("the watch ended (%v) before the finished group showed", w.Err())
}

// waitSettled waits until the seam lists pgid as settled.
func waitSettled(t *testing.T, s *seam, pgid int) {
	t.Helper()
	testwait.For(t, 15*time.Second, "the group settled", func() bool {
		infos, err := s.rt.listGroups(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range infos {
			if g.Pgid == pgid && g.State == groupstate.Settled {
				return true
			}
		}
		return false
	})
}

// A detached handle lets go of its group: the group runs on (Dispose does
// not end it), and once it finishes its small output stays in the sandbox
// for 'sandtop logs' instead of being withdrawn as a followed handle's is.
func TestDetachedHandleKeepsItsGroupAndItsOutput(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			s := newSeam(t, compat, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The program waits on a fifo, so it ends when the test says,
			// after the runtime let go of it.
			fifo := t.TempDir() + "/go"
			if err := unix.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			h, err := s.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/bin/sh", "-c", "echo kept-output; read -r _ < " + fifo}, Cwd: "/", Grace: time.Second,
				Stdio: Stdio{Stdin: StdinIgnore(), Stdout: KeptOutput(), Stderr: KeptOutput()}})
			if err != nil {
				t.Fatal(err)
			}
			h.Detach()
			select {
			case <-h.Done():
			case <-ctx.Done():
				t.Fatal("a detached handle never closed Done")
			}
			if _, err := h.Outcome(); !errors.Is(err, ErrDetached) {
				t.Fatalf("outcome of a detached handle: %v", err)
			}
			if n := s.rt.liveHandles(); n != 0 {
				t.Fatalf("the runtime still owns %d handles", n)
			}
			if err := s.rt.Dispose(ctx); err != nil {
				t.Fatal(err)
			}
			if alive, err := s.rt.control.GroupAlive(ctx, h.Pgid()); err != nil || !alive {
				t.Fatalf("after Dispose the detached group is alive=%v (%v)", alive, err)
			}
			f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.Write([]byte("\n"))
			f.Close()
			waitSettled(t, s, h.Pgid())
			b, err := s.rt.control.ReadFile(ctx, h.StateDir()+"/"+wrapper.StdoutSpillFile)
			if err != nil || string(b) != "kept-output\n" {
				t.Fatalf("the spill of a detached group: %q, %v", b, err)
			}
		})
	}
}
