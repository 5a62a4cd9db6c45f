package uisource

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/sandbox"
	"sandtop/testwait"
)

// Close ends every watch and leaves no goroutine of the adapter behind.
func TestSourceCloseLeavesNoGoroutines(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			src, _ := newTestSource(t, daemon.Config{Compat: compat}, Options{})
			ctx := context.Background()
			if _, err := src.Info(ctx); err != nil { // warm the connection
				t.Fatal(err)
			}
			before := runtime.NumGoroutine()
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			nextSnapshotWhere(t, watch, "a snapshot", func(sandbox.Snapshot) bool { return true })
			closed := make(chan struct{})
			go func() { src.Close(); close(closed) }()
			select {
			case <-closed:
			case <-time.After(30 * time.Second):
				t.Fatal("Close did not return")
			}
			for range watch { // closed, after at most the last snapshot
			}
			if _, err := src.Watch(ctx); err == nil {
				t.Error("Watch after Close succeeded")
			}
			testwait.NoError(t, 20*time.Second, func() error {
				if n := runtime.NumGoroutine(); n > before {
					buf := make([]byte, 1<<20)
					return fmt.Errorf("%d goroutines after Close, %d before Watch:\n%s", n, before, buf[:runtime.Stack(buf, true)])
				}
				return nil
			})
		})
	}
}

// A daemon that goes away mid-session: one readable error, the last
// snapshot shows every group settled, the channel closes, and reconnects
// back off.
func TestSourceDaemonGoneMidSession(t *testing.T) {
	for _, compat := range []bool{false, true} {
		t.Run(fmt.Sprintf("compat=%v", compat), func(t *testing.T) {
			t.Parallel()
			src, env := newTestSource(t, daemon.Config{Compat: compat}, Options{})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			watch, err := src.Watch(ctx)
			if err != nil {
				t.Fatal(err)
			}
			pgid, err := src.Spawn(ctx, []string{"sleep", "60"}, "")
			if err != nil {
				t.Fatal(err)
			}
			nextSnapshotWhere(t, watch, "the group live", func(s sandbox.Snapshot) bool {
				g := findGroup(s, pgid)
				return g != nil && g.Live() && g.LiveMembers() > 0
			})

			sctx, scancel := context.WithTimeout(ctx, 5*time.Second)
			env.Daemon.KillAll(sctx)
			env.Daemon.Shutdown(sctx)
			scancel()

			// Drain to the end; the last snapshot has the group settled.
			var last sandbox.Snapshot
			deadline := time.After(15 * time.Second)
		drain:
			for {
				select {
				case s, ok := <-watch:
					if !ok {
						break drain
					}
					last = s
				case <-deadline:
					t.Fatal("the watch did not end after the daemon went away")
				}
			}
			if g := findGroup(last, pgid); g != nil && g.Live() && g.LiveMembers() > 0 {
				t.Errorf("last snapshot still shows pgid %d live: %+v", pgid, *g)
			}
			err = src.Err()
			if err == nil || !strings.Contains(err.Error(), "test") {
				t.Fatalf("Err = %v; want a readable loss naming the sandbox", err)
			}
			t.Logf("loss: %v", err)

			// Reconnecting fails, and each attempt waits longer.
			start := time.Now()
			if _, err := src.Watch(ctx); err == nil {
				t.Fatal("Watch succeeded with the daemon gone")
			}
			first := time.Since(start)
			start = time.Now()
			if _, err := src.Watch(ctx); err == nil {
				t.Fatal("Watch succeeded with the daemon gone")
			}
			if second := time.Since(start); second < backoffFirst {
				t.Errorf("reconnect attempts %v then %v apart; want a backoff", first, second)
			}
		})
	}
}
