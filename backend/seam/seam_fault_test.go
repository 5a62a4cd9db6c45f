package seam

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/testwait"
)

// Row 45: a failing liveness request is reported by WaitForExit; an
// aborted one (the caller's context ended) is "not yet", without error.
func TestWaitForExitReportsAFailingLivenessRequest(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := spawnReady(t, s, time.Second, "echo ready; exec sleep 60")
		s.wire.failLiveness(errInjected)
		ok, err := h.WaitForExit(s.ctx())
		if ok || !errors.Is(err, errInjected) {
			t.Fatalf("WaitForExit with failing liveness: ok=%v err=%v", ok, err)
		}
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		if ok, err := h.WaitForExit(ended); ok || err != nil {
			t.Fatalf("WaitForExit after the caller gave up: ok=%v err=%v", ok, err)
		}
		s.wire.clearFaults()
		h.Terminate()
		waitTreeGone(t, h)
	})
}

// Row 68: when the liveness check after a natural exit fails, the handle
// stays owned, and disposal retries and releases it.
func TestFailedReleaseIsRetriedAtDisposal(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(64), time.Second, nil, "/bin/sleep", "1")
		s.wire.failLiveness(errInjected)
		before := s.wire.count(livenessKinds...)
		wantExit(t, settle(t, h), 0) // a natural exit; its release cannot prove the group gone
		testwait.For(t, 15*time.Second, "a liveness call after the exit", func() bool { return s.wire.count(livenessKinds...) > before })
		if s.rt.liveHandles() != 1 {
			t.Fatalf("Live() = %d with the release unproven, want 1", s.rt.liveHandles())
		}
		s.wire.clearFaults()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := s.rt.Dispose(ctx); err != nil {
			t.Fatalf("dispose: %v", err)
		}
		if s.rt.liveHandles() != 0 {
			t.Fatalf("Live() = %d after disposal", s.rt.liveHandles())
		}
	})
}

// Row 49: the batch stdin's close is part of the spawn: when it fails the
// spawn fails, and the rollback leaves nothing behind.
func TestBatchStdinCloseFailureFailsTheSpawnCleanly(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.failOn("CloseStdin", 1, errInjected)
		_, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/cat"}, Cwd: "/",
			Stdio: Stdio{Stdin: StdinData("batch"), Stdout: OutputCollect(64), Stderr: OutputCollect(64)}, Grace: 500 * time.Millisecond})
		if !errors.Is(err, errInjected) || !strings.Contains(err.Error(), "deliver the environment") {
			t.Fatalf("spawn: %v", err)
		}
		if s.rt.liveHandles() != 0 {
			t.Fatalf("Live() = %d after a failed spawn", s.rt.liveHandles())
		}
		wantNoWrapperLeft(t, s)
	})
}

// Row 52: a spawn that fails after the start, and whose rollback cannot
// remove the private state, reports both failures together.
func TestRollbackFailureIsJoinedToTheSpawnError(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.failOn("SendInput", 1, errInjected)
		rmErr := errors.New("injected rm failure")
		s.wire.failOn("Start:rm", 0, rmErr)
		// Batch stdin, so the spawn writes input on every plane (the shim
		// takes the environment in its spec, not on stdin).
		_, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/sleep", "60"}, Cwd: "/",
			Stdio: Stdio{Stdin: StdinData("batch"), Stdout: OutputCollect(64), Stderr: OutputCollect(64)}, Grace: 500 * time.Millisecond})
		if !errors.Is(err, errInjected) || !errors.Is(err, rmErr) || !strings.Contains(err.Error(), "rollback failed") {
			t.Fatalf("spawn: %v", err)
		}
		s.wire.clearFaults()
		wantNoWrapperLeft(t, s)
	})
}

// Row 21: the withdrawal of an over-cap spill runs in the background; its
// failure is contained: the outcome and the reads are as without it.
func TestSpillRemovalFailureIsContained(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.failOn("Start:rm", 0, errInjected)
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(4, 8), Stderr: OutputCollect(4, 100)}, time.Second, nil,
			"/bin/sh", "-c", "printf 0123456789")
		wantExit(t, settle(t, h), 0)
		testwait.For(t, 15*time.Second, "the removal attempt", func() bool { return s.wire.count("Start:rm") > 0 })
		if got := h.Collected.Stdout.ReadFrom(0); got.SpillPath != "" || got.Text != "6789" {
			t.Fatalf("stdout read %+v", got)
		}
		// The file is still there, but never advertised.
		if _, err := s.rt.control.ReadFile(context.Background(), h.StateDir()+"/stdout.log"); err != nil {
			t.Fatalf("the spill should have stayed behind: %v", err)
		}
		s.wire.clearFaults()
	})
}

// wantNoWrapperLeft polls until no process of the sandbox runs the wrapper.
func wantNoWrapperLeft(t *testing.T, s *seam) {
	t.Helper()
	testwait.For(t, 15*time.Second, "no wrapper left", func() bool {
		res, err := s.proc.List(context.Background(), connect.NewRequest(&process.ListRequest{}))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range res.Msg.GetProcesses() {
			if strings.Contains(strings.Join(p.GetConfig().GetArgs(), " "), "sandtop-wrapper") {
				return false
			}
		}
		return true
	})
}

// Row 16: a published exit status that is not a decimal 0..255 (the state
// directory is writable by the sandbox user) rejects the outcome; it is
// forged here on the wire, as the file's content the runtime reads.
func TestForgedExitStatusRejectsTheOutcome(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		s.wire.forgeWith(func(req, res any) {
			switch r := res.(type) {
			case *sandtopv1.ReadFileResponse: // the extension reads the file
				if strings.HasSuffix(req.(*sandtopv1.ReadFileRequest).GetPath(), "/exit-code") {
					r.Data, r.Size = []byte("999\n"), 4
				}
			case *process.StartResponse: // stock envd: cat through Start
				q, ok := req.(*process.StartRequest)
				script := strings.Join(q.GetProcess().GetArgs(), " ")
				if ok && strings.Contains(script, "exec cat") && strings.Contains(script, "/exit-code") && r.GetEvent().GetData().GetStdout() != nil {
					r.GetEvent().GetData().Output = &process.ProcessEvent_DataEvent_Stdout{Stdout: []byte("999\n")}
				}
			}
		})
		h := s.spawn(collectBoth(64), time.Second, nil, "/bin/sh", "-c", "exit 3")
		<-h.Done()
		if _, err := h.Outcome(); err == nil || !strings.Contains(err.Error(), `invalid exit code "999"`) {
			t.Fatalf("outcome error %v", err)
		}
		s.wire.forgeWith(nil)
	})
}

// blockingWriter is a host writer that never returns until unblocked: a
// terminal or pipe on the host that stopped reading.
type blockingWriter struct{ unblock chan struct{} }

func (w blockingWriter) Write(p []byte) (int, error) {
	<-w.unblock
	return len(p), nil
}

// Row 11: an inherited write blocked by the host is released at drain
// expiry: the outcome settles although the host writer never returns.
func TestBlockedInheritedWriteIsReleasedAtDrainExpiry(t *testing.T) {
	for _, p := range bothPlanes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			w := blockingWriter{unblock: make(chan struct{})}
			t.Cleanup(func() { close(w.unblock) })
			s := newSeam(t, p.compat, func(_ *daemon.Config, rc *RuntimeConfig) { rc.Stdout = w })
			// A descendant keeps the output open, so the drain bound applies.
			h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputInherit(), Stderr: OutputCollect(64)}, 300*time.Millisecond, nil,
				"/bin/sh", "-c", "echo blocked; sleep 60 & exit 0")
			select {
			case <-h.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the outcome waited on the blocked host writer")
			}
			wantExit(t, settle(t, h), 0)
			h.Terminate()
			waitTreeGone(t, h)
		})
	}
}
