package seam

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/backend/gen/process"
	"sandtop/testwait"
)

// termSpec is a terminal whose program ignores SIGTERM (so only the KILL
// tier ends it) or exits at once.
func termSpec(s *seam, script string) TerminalSpec {
	return TerminalSpec{Argv: []string{"/bin/sh", "-c", script}, Cwd: s.t.TempDir(), Rows: 10, Cols: 40, Grace: 200 * time.Millisecond}
}

// Terminal row 14: a PTY kill that fails for another reason than a missing
// process fails Terminate; a retry then ends the terminal.
func TestTerminalKillFailurePropagatesAndRetryWorks(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		ready := filepath.Join(t.TempDir(), "ready")
		term, err := s.rt.SpawnTerminal(s.ctx(), termSpec(s, `trap "" TERM HUP; : >`+ready+`; while :; do sleep 0.05; done`))
		if err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 15*time.Second, "the trap", func() bool { _, err := os.Stat(ready); return err == nil })
		s.wire.failOn("SendSignal:SIGNAL_SIGKILL", 0, errInjected)
		err = term.Terminate(s.ctx())
		if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "SIGKILL to pid") {
			t.Fatalf("Terminate with a failing kill: %v", err)
		}
		select {
		case <-term.Done():
			// The group KILL may still have ended it; the error stands.
		default:
		}
		if s.rt.ownedTerminals() != 1 {
			t.Fatalf("Terminals() = %d after a failed Terminate, want 1", s.rt.ownedTerminals())
		}
		s.wire.clearFaults()
		if err := term.Terminate(s.ctx()); err != nil {
			t.Fatalf("retry: %v", err)
		}
		<-term.Done()
		testwait.For(t, 10*time.Second, "the terminal released", func() bool { return s.rt.ownedTerminals() == 0 })
	})
}

// Terminal rows 31 and 32: when the automatic release after a natural
// exit fails, the failure is contained (logged, nothing else breaks) and
// the terminal stays owned until disposal retries it.
func TestTerminalFailedAutomaticReleaseIsRetriedAtDisposal(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		term, err := s.rt.SpawnTerminal(s.ctx(), termSpec(s, "read x"))
		if err != nil {
			t.Fatal(err)
		}
		s.wire.failLiveness(errInjected)
		before := s.wire.count(livenessKinds...)
		if err := term.Write(s.ctx(), []byte("\n")); err != nil {
			t.Fatal(err)
		}
		<-term.Done()
		testwait.For(t, 15*time.Second, "the release's liveness call", func() bool { return s.wire.count(livenessKinds...) > before })
		if s.rt.ownedTerminals() != 1 {
			t.Fatalf("Terminals() = %d with the release unproven, want 1", s.rt.ownedTerminals())
		}
		s.wire.clearFaults()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.rt.disposeTerminals(ctx); err != nil {
			t.Fatalf("DisposeTerminals: %v", err)
		}
		if s.rt.ownedTerminals() != 0 {
			t.Fatalf("Terminals() = %d after disposal", s.rt.ownedTerminals())
		}
	})
}

// seamTerminalDirs lists the terminal state directories of s's daemon.
func seamTerminalDirs(t *testing.T, s *seam) []string {
	t.Helper()
	return terminalDirsIn(t, s.d.RuntimeRoot)
}

// disposeAsync starts Dispose and returns its result channel.
func disposeAsync(s *seam) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done <- s.rt.Dispose(ctx)
	}()
	return done
}

// spawnTerminalAsync starts SpawnTerminal and returns its error channel.
func spawnTerminalAsync(s *seam, spec TerminalSpec) <-chan error {
	done := make(chan error, 1)
	go func() {
		_, err := s.rt.SpawnTerminal(context.Background(), spec)
		done <- err
	}()
	return done
}

// wantDisposedCleanly checks a spawn rejected by disposal left nothing.
func wantDisposedCleanly(t *testing.T, s *seam, spawned, disposed <-chan error) {
	t.Helper()
	if err := <-spawned; !errors.Is(err, ErrDisposing) {
		t.Fatalf("SpawnTerminal during disposal: %v", err)
	}
	if err := <-disposed; err != nil {
		t.Fatalf("Dispose: %v", err)
	}
	if n := s.rt.ownedTerminals(); n != 0 {
		t.Fatalf("Terminals() = %d after disposal", n)
	}
	if dirs := seamTerminalDirs(t, s); len(dirs) != 0 {
		t.Fatalf("state directories left behind: %v", dirs)
	}
}

// Terminal row 27: a setup whose PTY start is still on the wire when
// disposal begins is joined (Dispose waits for it) and then rejected, and
// the PTY it got is rolled back.
func TestTerminalSetupCompletingDuringDisposalIsJoinedAndRejected(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		release := s.wire.holdOn("Start:terminal")
		defer release()
		spawned := spawnTerminalAsync(s, termSpec(s, "exec sleep 60"))
		testwait.For(t, 15*time.Second, "the terminal's Start on the wire", func() bool { return s.wire.count("Start:terminal") > 0 })
		disposed := disposeAsync(s)
		select {
		case err := <-disposed:
			t.Fatalf("Dispose returned (%v) while a setup was in flight", err)
		case <-time.After(300 * time.Millisecond):
		}
		release()
		wantDisposedCleanly(t, s, spawned, disposed)
	})
}

// Terminal row 29: disposal cancels a state-directory write in flight, and
// the directory is removed.
func TestTerminalStateWriteIsCancelledAtDisposal(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		release := s.wire.holdOn("SendInput")
		defer release()
		spawned := spawnTerminalAsync(s, termSpec(s, "exec sleep 60"))
		testwait.For(t, 15*time.Second, "the state directory", func() bool { return len(seamTerminalDirs(t, s)) == 1 })
		testwait.For(t, 15*time.Second, "the state's input on the wire", func() bool { return s.wire.count("SendInput") > 0 })
		wantDisposedCleanly(t, s, spawned, disposeAsync(s))
	})
}

// Terminal row 28: a setup whose boundary never arrives (its output is
// lost on the way) is rolled back when disposal begins: no session, no
// state.
func TestTerminalLostBoundaryIsRolledBackAtDisposal(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.dropOutput("Start:terminal")
		spawned := spawnTerminalAsync(s, termSpec(s, "exec sleep 60"))
		testwait.For(t, 15*time.Second, "the terminal's Start", func() bool { return s.wire.count("Start:terminal") > 0 })
		testwait.For(t, 15*time.Second, "the runner's session", func() bool {
			infos, err := s.rt.listTerminals(context.Background())
			return err == nil && len(infos) == 1
		})
		wantDisposedCleanly(t, s, spawned, disposeAsync(s))
		if infos, err := s.rt.listTerminals(context.Background()); err != nil || len(infos) != 0 {
			t.Fatalf("terminals left: %+v, %v", infos, err)
		}
	})
}

// Terminal row 5: a start event with a pid of 1 or less (never signalled:
// kill(-1) reaches everything) fails the allocation and removes its state.
func TestTerminalUnsafeStartPidIsRefused(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.forgeWith(func(req, res any) {
			q, ok := req.(*process.StartRequest)
			r, rok := res.(*process.StartResponse)
			if ok && rok && r.GetEvent().GetStart() != nil && strings.Contains(strings.Join(q.GetProcess().GetArgs(), " "), "runner.bash") {
				r.GetEvent().GetStart().Pid = 1
			}
		})
		_, err := s.rt.SpawnTerminal(s.ctx(), termSpec(s, "exit 0"))
		if err == nil || !strings.Contains(err.Error(), "invalid terminal pid 1") {
			t.Fatalf("SpawnTerminal with a forged pid 1: %v", err)
		}
		s.wire.forgeWith(nil)
		if dirs := seamTerminalDirs(t, s); len(dirs) != 0 {
			t.Fatalf("state directories left behind: %v", dirs)
		}
		if s.rt.ownedTerminals() != 0 {
			t.Fatalf("Terminals() = %d", s.rt.ownedTerminals())
		}
	})
}
