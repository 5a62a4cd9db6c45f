package backend

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// termSpec is a terminal whose program ignores SIGTERM (so only the KILL
// tier ends it) or exits at once.
func termSpec(s *seam, script string) TerminalSpec {
	return TerminalSpec{Argv: []string{"/bin/sh", "-c", script}, Cwd: s.t.TempDir(), Rows: 10, Cols: 40, GraceMs: 200}
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
		pollUntil(t, "the trap", 15*time.Second, func() bool { _, err := os.Stat(ready); return err == nil })
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
		if s.rt.Terminals() != 1 {
			t.Fatalf("Terminals() = %d after a failed Terminate, want 1", s.rt.Terminals())
		}
		s.wire.clearFaults()
		if err := term.Terminate(s.ctx()); err != nil {
			t.Fatalf("retry: %v", err)
		}
		<-term.Done()
		pollUntil(t, "the terminal released", 10*time.Second, func() bool { return s.rt.Terminals() == 0 })
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
		pollUntil(t, "the release's liveness call", 15*time.Second, func() bool { return s.wire.count(livenessKinds...) > before })
		if s.rt.Terminals() != 1 {
			t.Fatalf("Terminals() = %d with the release unproven, want 1", s.rt.Terminals())
		}
		s.wire.clearFaults()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.rt.DisposeTerminals(ctx); err != nil {
			t.Fatalf("DisposeTerminals: %v", err)
		}
		if s.rt.Terminals() != 0 {
			t.Fatalf("Terminals() = %d after disposal", s.rt.Terminals())
		}
	})
}
