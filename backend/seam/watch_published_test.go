package seam

import (
	"context"
	"testing"
	"time"

	"sandtop/groupstate"
	"sandtop/testwait"
)

// What a scan of the published state finds reaches the watch even when
// the live table does not change after it: on a quiet sandtop daemon the
// group stream sends nothing new, and a group's exit read by the scan
// that follows its end (or a new watch's first scan) must still be shown.
func TestWatchShowsWhatAScanFindsWithoutATableChange(t *testing.T) {
	env := newTerminalTestEnv(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := env.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/bin/sh", "-c", "exit 7"}, Cwd: env.cwd,
		Stdio: Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(64), Stderr: OutputCollect(64)}, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	pgid := h.Pgid()
	h.Detach()
	testwait.For(t, 10*time.Second, "the exit to be published", func() bool {
		s, err := env.rt.Snapshot(ctx, WatchOptions{})
		if err != nil {
			return false
		}
		for _, g := range s.Groups {
			if g.PGID == pgid && g.Exit != nil {
				return true
			}
		}
		return false
	})
	// A new watch on a sandbox where nothing runs: its first table is its
	// last, and the finished group comes from its first scan.
	w, err := env.newClient(t).Watch(ctx, WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	deadline := time.After(3 * scanEvery)
	for {
		select {
		case s, ok := <-w.C():
			if !ok {
				t.Fatalf("the watch ended: %v", w.Err())
			}
			for _, g := range s.Groups {
				if g.PGID == pgid && g.Exit != nil && g.Exit.Code == 7 {
					return
				}
			}
		case <-deadline:
			t.Fatalf("no snapshot showed group %d's exit 7 within %s", pgid, 3*scanEvery)
		}
	}
}

// A scan that still finds running a group the live table no longer has
// (its supervisor has not written the end yet) brings the next scan to
// the gap, not the idle pace; a group gone for longer than argvMemory,
// whose record may never end, does not.
func TestScanLooksAgainSoonForAnEndNotYetWritten(t *testing.T) {
	const dir = "/run/x/g1"
	running := []PublishedGroup{{StateDir: dir, Pgid: 4242, State: groupstate.Running}}
	for _, tc := range []struct {
		name     string
		lastLive time.Duration
		soon     bool
	}{
		{"just left", time.Second, true},
		{"left long ago", 2 * argvMemory, false},
	} {
		p := newPublishedState()
		p.live = map[int]bool{} // the table no longer has 4242
		p.argv[dir] = rememberedArgv{argv: []string{"sh"}, seen: time.Now().Add(-tc.lastLive)}
		start := time.Now()
		p.record(false, start, start, running, nil)
		if soon := time.Until(p.nextOwn) <= scanGap; soon != tc.soon {
			t.Errorf("%s: next scan in %s, want within the gap: %v", tc.name, time.Until(p.nextOwn).Round(time.Millisecond), tc.soon)
		}
	}
}
