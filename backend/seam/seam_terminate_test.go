package seam

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/testwait"
)

// groupAliveNow asks the real process table (not the runtime) whether pgid
// has a live member.
func groupAliveNow(t testing.TB, pgid int) bool {
	t.Helper()
	out, err := runLocalPs()
	if err != nil {
		t.Fatal(err)
	}
	return control.GroupLiveIn(out, pgid)
}

func terminateAndProve(t *testing.T, s *seam, h *Handle) {
	t.Helper()
	h.Terminate()
	waitTreeGone(t, h)
	if groupAliveNow(t, h.Pgid()) {
		t.Fatalf("group %d still has live members after WaitForExit", h.Pgid())
	}
}

func TestTerminateTermIgnoringTree(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1024), 200*time.Millisecond, nil, "/bin/sh", "-c", `trap "" TERM; sleep 1000 & sleep 1000 & echo ready; wait`)
		testwait.For(t, 10*time.Second, "ready", func() bool { return strings.Contains(h.Collected.Stdout.ReadFrom(0).Text, "ready") })
		start := time.Now()
		terminateAndProve(t, s, h)
		if took := time.Since(start); took < 200*time.Millisecond {
			t.Fatalf("a TERM-ignoring tree went away after %v, before the grace", took)
		}
		wantSignal(t, settle(t, h), "SIGKILL")
		if s.wire.count("SignalGroup:SIGKILL", "Start:kill") == 0 {
			t.Fatal("no KILL was sent")
		}
	})
}

func TestTerminateLeaderExitsWhileChildIgnoresTerm(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1024), 300*time.Millisecond, nil, "/bin/sh", "-c", `(trap "" TERM; echo ready; exec sleep 1000) & exec sleep 1000`)
		// "ready" comes from the child once it ignores TERM.
		testwait.For(t, 10*time.Second, "ready", func() bool { return strings.Contains(h.Collected.Stdout.ReadFrom(0).Text, "ready") })
		terminateAndProve(t, s, h)
		// The direct command died of the TERM; its survivor needed KILL.
		wantSignal(t, settle(t, h), "SIGTERM")
		if s.wire.count("SignalGroup:SIGKILL", "Start:kill") < 1 {
			t.Fatal("the surviving child was not escalated to KILL")
		}
	})
}

func TestTeardownOfZombieOnlyGroupIsImmediate(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		// With job control on, the background subshell leads its own group.
		// It exits only once its parent has become a sleep that never reaps
		// ($$ is the parent's pid), leaving that group with one zombie
		// however slow the exec is.
		h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputCollect(1024)}, time.Second, nil,
			"/bin/bash", "-c", `set -m; (until read -r c </proc/$$/comm && [ "$c" = sleep ]; do sleep 0.005; done) & echo $!; exec sleep 1000`)
		line := make([]byte, 32)
		n, err := h.Stdout.Read(line)
		if err != nil {
			t.Fatal(err)
		}
		zpgid, err := strconv.Atoi(strings.TrimSpace(string(line[:n])))
		if err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 10*time.Second, "the zombie", func() bool {
			rows, _ := runLocalPs()
			for _, r := range rows {
				if r.Pgid == zpgid && r.State == "Z" {
					return true
				}
			}
			return false
		})
		var phases []TeardownPhase
		killsBefore := s.wire.count("SignalGroup:SIGKILL", "Start:kill")
		if err := s.rt.TeardownGroup(s.ctx(), zpgid, 10*time.Second, func(ev TeardownEvent) { phases = append(phases, ev.Phase) }); err != nil {
			t.Fatal(err)
		}
		if got := phasesText(phases); got != "term-sent waiting empty" {
			t.Fatalf("phases %q", got)
		}
		if s.wire.count("SignalGroup:SIGKILL", "Start:kill")-killsBefore > 1 {
			t.Fatal("a zombie-only group was escalated")
		}
		terminateAndProve(t, s, h)
	})
}

func phasesText(p []TeardownPhase) string {
	s := make([]string, len(p))
	for i, x := range p {
		s[i] = string(x)
	}
	return strings.Join(s, " ")
}

func TestTerminateReportsTermAndIsANoOpAfterSettlement(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := spawnReady(t, s, 5*time.Second, "echo ready; exec sleep 1000")
		h.Terminate()
		h.Terminate() // in flight: no second attempt
		waitTreeGone(t, h)
		wantSignal(t, settle(t, h), "SIGTERM")
		sent := s.wire.signalCalls()
		if s.wire.count("SignalGroup:SIGKILL") != 0 || sent != 1 {
			t.Fatalf("one TERM expected, the daemon saw %d signal calls (%v)", sent, s.wire.calls)
		}
		h.Terminate()
		h.Terminate()
		if ok, err := h.WaitForExit(s.ctx()); !ok || err != nil {
			t.Fatal(ok, err)
		}
		time.Sleep(20 * time.Millisecond) // would let a stray attempt reach the wire
		if n := s.wire.signalCalls(); n != sent {
			t.Fatalf("Terminate after settlement sent %d more signal calls", n-sent)
		}
	})
}

func TestTerminateIsANoOpAfterNaturalExit(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1024), time.Second, nil, "/bin/true")
		wantExit(t, settle(t, h), 0)
		waitTreeGone(t, h)
		h.Terminate()
		time.Sleep(20 * time.Millisecond)
		if n := s.wire.signalCalls(); n != 0 {
			t.Fatalf("%d signal calls after natural quiescence", n)
		}
		wantExit(t, settle(t, h), 0)
	})
}

func TestTerminateSurvivingGroupAfterLeaderSettles(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		// The survivor holds no output open, so done settles at leader exit.
		h := s.spawn(collectBoth(1024), 200*time.Millisecond, nil, "/bin/sh", "-c", `sleep 1000 >/dev/null 2>&1 & exit 0`)
		wantExit(t, settle(t, h), 0)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if ok, err := h.WaitForExit(ctx); ok || err != nil {
			t.Fatalf("WaitForExit on a live group: %v %v", ok, err)
		}
		if s.rt.liveHandles() != 1 {
			t.Fatalf("a group with a live member is not owned (live=%d)", s.rt.liveHandles())
		}
		terminateAndProve(t, s, h)
		testwait.For(t, 5*time.Second, "release", func() bool { return s.rt.liveHandles() == 0 })
	})
}

func TestTerminateEscalatesWhenTermTransportFails(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1024), 100*time.Millisecond, nil, "/bin/sleep", "1000")
		s.wire.failOn("SignalGroup:SIGTERM", 0, errInjected)
		s.wire.failOn("Start:kill", 1, errInjected)
		terminateAndProve(t, s, h)
		wantSignal(t, settle(t, h), "SIGKILL")
	})
}

func TestForceCleanupStaysRetryableUntilProven(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := spawnReady(t, s, 50*time.Millisecond, `trap "" TERM; echo ready; sleep 1000`)
		for _, k := range []string{"SignalGroup:SIGTERM", "SignalGroup:SIGKILL", "Start:kill", "SendSignal:SIGNAL_SIGKILL"} {
			s.wire.failOn(k, 0, errInjected)
		}
		h.Terminate()
		ok, err := h.WaitForExit(s.ctx())
		if ok || err == nil || !strings.Contains(err.Error(), "remained live after force termination") {
			t.Fatalf("WaitForExit = %v, %v", ok, err)
		}
		if !groupAliveNow(t, h.Pgid()) {
			t.Fatal("the group died although every signal failed")
		}
		s.wire.clearFaults()
		terminateAndProve(t, s, h)
	})
}

func TestSandboxGoneMeansSettled(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		h := s.spawn(collectBoth(1024), 100*time.Millisecond, nil, "/bin/sleep", "1000")
		pgid := h.Pgid()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		// The sandbox goes away: its processes die with it.
		if err := s.d.Daemon.KillAll(ctx); err != nil {
			t.Fatal(err)
		}
		killLocalGroup(pgid)
		if err := s.d.Daemon.Shutdown(ctx); err != nil {
			t.Log(err)
		}
		h.Terminate()
		if ok, err := h.WaitForExit(ctx); !ok || err != nil {
			t.Fatalf("WaitForExit after the sandbox vanished: %v %v", ok, err)
		}
		settle(t, h)
	})
}
