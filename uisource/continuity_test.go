package uisource

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/seam"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"sandtop/ui"
)

// A group torn down stays in every snapshot from running to its published
// end: between its leaving the process table and the next scan of the
// state directories it is settled, not absent (a TUI's cursor and pane
// followed it away). Teardown also takes a nil progress.
func TestGroupIsListedWithoutAGapFromRunningToItsExit(t *testing.T) {
	planes := []struct {
		name string
		src  func(t *testing.T) ui.Source
	}{
		{"daemon", func(t *testing.T) ui.Source { return newDaemonSource(t) }},
		{"compat", func(t *testing.T) ui.Source { return newCompatSource(t, "") }},
	}
	for _, plane := range planes {
		t.Run(plane.name, func(t *testing.T) {
			src := plane.src(t)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			// The file says the trap is set: a SIGTERM before it would end
			// the shell by the signal, not with 5.
			armed := filepath.Join(t.TempDir(), "armed")
			pgid, err := src.Spawn(ctx, []string{"sh", "-c", `trap 'exit 5' TERM; : > "$1"; while :; do sleep 0.1; done`, "sh", armed}, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
			ch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			find := func(s sandbox.Snapshot) *sandbox.Group {
				for i := range s.Groups {
					if s.Groups[i].PGID == pgid {
						return &s.Groups[i]
					}
				}
				return nil
			}
			nextSnapshotWhere(t, ch, "the group running", func(s sandbox.Snapshot) bool {
				g := find(s)
				return g != nil && g.State == groupstate.Running
			})
			testwait.NoError(t, 10*time.Second, func() error {
				_, err := os.Stat(armed)
				return err
			})
			torn := make(chan error, 1)
			go func() { torn <- src.Teardown(ctx, pgid, 2*time.Second, nil) }()
			var states []string
			tornC := (<-chan error)(torn) // nil once the teardown has returned
			deadline := time.After(20 * time.Second)
			for {
				select {
				case s, ok := <-ch:
					if !ok {
						t.Fatalf("the watch ended after %v", states)
					}
					g := find(s)
					if g == nil {
						t.Fatalf("a snapshot left the group out after %v", states)
					}
					state := string(g.State)
					if g.Exit != nil {
						state += fmt.Sprintf(" (exit %d, signal %q)", g.Exit.Code, g.Exit.Signal)
					}
					states = append(states, state)
					if g.Exit != nil && g.Exit.Code == 5 {
						if tornC != nil {
							if err := <-tornC; err != nil {
								t.Fatalf("teardown: %v", err)
							}
						}
						return
					}
				case err := <-tornC:
					if err != nil {
						t.Fatalf("teardown: %v (the group was %v)", err, states)
					}
					tornC = nil // the exit is still awaited
				case <-deadline:
					// Whether the watch or the published state is behind.
					now := "no fresh snapshot"
					if bs, ok := src.(*backendSource); ok {
						if snap, err := bs.rt.Snapshot(context.Background(), seam.WatchOptions{}); err == nil {
							g := find(snap)
							now = fmt.Sprintf("a fresh snapshot lists it as %+v", g)
							if g != nil && g.StateDir != "" {
								files, _ := os.ReadDir(g.StateDir)
								for _, f := range files {
									b, _ := os.ReadFile(filepath.Join(g.StateDir, f.Name()))
									now += fmt.Sprintf("\n%s: %.200q", f.Name(), b)
								}
							}
						}
					}
					t.Fatalf("no exit code 5 after 20 s; the group was %v; %s", states, now)
				}
			}
		})
	}
}
