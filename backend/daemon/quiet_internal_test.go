package daemon

import (
	"context"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"weak"

	"sandtop/backend/gen/process"
	"sandtop/testwait"
)

func quietDaemon(t *testing.T, retention time.Duration) *Daemon {
	t.Helper()
	d, err := New(Config{RuntimeRoot: t.TempDir(), ExitRetention: retention})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = d.KillAll(ctx)
		_ = d.Shutdown(ctx)
	})
	return d
}

func spawnPlain(t *testing.T, d *Daemon, cmd string, args ...string) (*proc, *subscriber) {
	t.Helper()
	no := false
	p, sub, err := d.spawn(spawnRequest{
		req:  &process.StartRequest{Process: &process.ProcessConfig{Cmd: cmd, Args: args}, Stdin: &no},
		user: d.self.user,
	})
	if err != nil {
		t.Fatal(err)
	}
	return p, sub
}

// goroutinesIn counts the goroutines with any of funcs on their stacks.
func goroutinesIn(funcs ...string) int {
	buf := make([]byte, 8<<20)
	n := 0
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		for _, f := range funcs {
			if strings.Contains(g, f) {
				n++
				break
			}
		}
	}
	return n
}

// A quiet plain process (an SDK's background command) costs the daemon no
// goroutine while it runs: its pipes and its pidfd wait in the quiet set.
// Once it ended and its exit was kept for the retention period, nothing
// of the daemon holds it any more.
func TestQuietPlainStartsHoldNoGoroutineAndAreForgotten(t *testing.T) {
	const n = 40
	d := quietDaemon(t, 100*time.Millisecond)
	var procs []*proc
	var refs []weak.Pointer[proc]
	for range n {
		p, sub := spawnPlain(t, d, "sleep", "60")
		sub.unsubscribe()
		procs = append(procs, p)
		refs = append(refs, weak.Make(p))
	}
	for _, p := range procs {
		if len(p.quiet) != 2 || len(p.readers) != 0 {
			t.Fatalf("process %d: %d pipes in the quiet set and %d read by pumps, want 2 and 0", p.pid, len(p.quiet), len(p.readers))
		}
	}
	busy := []string{"daemon.(*proc).pump", "daemon.(*proc).supervise", "daemon.(*quietStream).ready"}
	if k := goroutinesIn(busy...); k != 0 {
		t.Fatalf("%d goroutines read or wait for %d quiet processes, want none", k, n)
	}
	for _, p := range procs {
		if err := d.signalProc(p, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range procs {
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			t.Fatalf("process %d did not end", p.pid)
		}
		if ws, ok := p.waitStatus(); !ok || ws.Signal() != syscall.SIGKILL {
			t.Fatalf("process %d ended with %v (known %v), want SIGKILL", p.pid, ws, ok)
		}
	}
	procs = nil
	testwait.For(t, 20*time.Second, "every ended process to be let go", func() bool {
		runtime.GC()
		for _, r := range refs {
			if r.Value() != nil {
				return false
			}
		}
		return true
	})
}

// Output that comes in bursts, between quiet spells, all arrives, in
// order, each stream on its own, and the end after it.
func TestQuietPipesDeliverBurstsAndTheEnd(t *testing.T) {
	d := quietDaemon(t, time.Minute)
	p, sub := spawnPlain(t, d, "sh", "-c", "printf a; sleep 0.1; printf b >&2; sleep 0.1; printf c; printf d >&2; exit 3")
	defer sub.unsubscribe()
	var out, errs strings.Builder
	deadline := time.After(20 * time.Second)
	for {
		chunks, final, err, wait := sub.next(1 << 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chunks {
			if c.kind == kindStderr {
				errs.Write(c.data)
			} else {
				out.Write(c.data)
			}
		}
		if final != nil {
			if final.GetExitCode() != 3 {
				t.Fatalf("end %v, want exit code 3", final)
			}
			break
		}
		if wait != nil {
			select {
			case <-wait:
			case <-deadline:
				t.Fatalf("no end from process %d; stdout %q, stderr %q so far", p.pid, out.String(), errs.String())
			}
		}
	}
	if out.String() != "ac" || errs.String() != "bd" {
		t.Fatalf("stdout %q, stderr %q; want \"ac\" and \"bd\"", out.String(), errs.String())
	}
}
