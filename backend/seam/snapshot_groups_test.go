package seam

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"sandtop/sandbox"
	"sandtop/testwait"
)

// A snapshot of named groups on sandtop's daemon reads them alone, and
// shows each as the whole snapshot does: a group under its shim, a
// terminal's group, one whose leader exited while a child it left in the
// group runs on; a pgid that is no group is not listed.
func TestSnapshotOfNamedGroupsAgreesWithTheWholeOne(t *testing.T) {
	env := newTerminalTestEnv(t, false)
	ctx := context.Background()
	term, err := env.rt.SpawnTerminal(ctx, shellSpec(env.cwd))
	if err != nil {
		t.Fatal(err)
	}
	defer term.Terminate(ctx)
	var pgids []int
	for _, script := range []string{"sleep 60", "sleep 60 & exit 0"} {
		h, err := env.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/bin/sh", "-c", script}, Cwd: env.cwd,
			Stdio: Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(64), Stderr: OutputCollect(64)}, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		defer env.rt.TeardownGroup(ctx, h.Pgid(), 200*time.Millisecond, nil)
		pgids = append(pgids, h.Pgid())
	}
	pgids = append(pgids, term.Pid(), 999999)
	byPgid := func(s sandbox.Snapshot) map[int]sandbox.Group {
		m := map[int]sandbox.Group{}
		for _, g := range s.Groups {
			g.Started = time.Time{} // read from /proc each time, to the tick
			m[g.PGID] = g
		}
		return m
	}
	testwait.NoError(t, 10*time.Second, func() error {
		whole, err := env.rt.Snapshot(ctx, WatchOptions{LiveOnly: true})
		if err != nil {
			return err
		}
		named, err := env.rt.Snapshot(ctx, WatchOptions{LiveOnly: true, Groups: pgids})
		if err != nil {
			return err
		}
		w, n := byPgid(whole), byPgid(named)
		for _, pgid := range pgids[:3] {
			if _, ok := w[pgid]; !ok {
				return fmt.Errorf("group %d is not in the whole snapshot", pgid)
			}
			if !reflect.DeepEqual(w[pgid], n[pgid]) {
				return fmt.Errorf("group %d:\nwhole %+v\nnamed %+v", pgid, w[pgid], n[pgid])
			}
		}
		if _, ok := n[999999]; ok || len(n) != 3 {
			return fmt.Errorf("the named snapshot lists %d groups, want the 3 named that exist", len(n))
		}
		return nil
	})
}
