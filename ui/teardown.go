package ui

import (
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// teardown is the live progress of one group's teardown.
type teardown struct {
	phase    TeardownPhase
	started  time.Time
	deadline time.Time // end of the grace, while waiting
	members  int
	finished time.Time
	err      error
	// steps are what it did, in order, for the group's detail pane, which
	// shows them below the group's output.
	steps []teardownStep
}

// teardownStep is one step of a teardown as the detail pane tells it.
type teardownStep struct {
	at    time.Time
	phase TeardownPhase
	text  string
}

func (td *teardown) step(at time.Time, phase TeardownPhase, format string, args ...any) {
	td.steps = append(td.steps, teardownStep{at: at, phase: phase, text: fmt.Sprintf(format, args...)})
}

// startTeardown begins TERM → grace → KILL → empty on one of sb's groups.
func (m *Model) startTeardown(sb *sandboxState, g *sandbox.Group) tea.Cmd {
	if m.readOnly(sb) {
		m.refuse(sb, "teardown")
		return nil
	}
	if td, ok := sb.teardowns[g.PGID]; ok && td.finished.IsZero() {
		m.setStatus(levelWarn, fmt.Sprintf("pgid %d is already being torn down", g.PGID))
		return nil
	}
	now := m.now()
	sb.teardowns[g.PGID] = &teardown{phase: TeardownTerm, started: now, members: g.LiveMembers()}
	sb.events.add(now, levelInfo, "teardown of pgid %d (%s): SIGTERM, SIGKILL after %s", g.PGID, command(g), m.opts.Grace)
	return m.teardownCmd(sb, g.PGID, m.opts.Grace)
}

func (m *Model) onTeardownProgress(sb *sandboxState, pgid int, ev TeardownEvent) {
	td := sb.teardowns[pgid]
	if td == nil {
		return
	}
	now := m.now()
	td.phase = ev.Phase
	if ev.Members > 0 || ev.Phase == TeardownEmpty {
		td.members = ev.Members
	}
	switch ev.Phase {
	case TeardownTerm:
		sb.events.add(now, levelInfo, "SIGTERM to pgid %d (%s)", pgid, count(td.members, "member"))
		td.step(now, ev.Phase, "SIGTERM to %s", count(td.members, "member"))
	case TeardownWaiting:
		// The row counts the grace down; the pane keeps its rows for
		// the output.
		td.deadline = now.Add(ev.Remaining)
	case TeardownKill:
		sb.events.add(now, levelWarn, "SIGKILL to pgid %d after %s (%s left)", pgid, roundDur(now.Sub(td.started)), count(td.members, "member"))
		td.step(now, ev.Phase, "SIGKILL after %s (%s left)", roundDur(now.Sub(td.started)), count(td.members, "member"))
	case TeardownEmpty:
		sb.events.add(now, levelOK, "pgid %d empty after %s", pgid, roundDur(now.Sub(td.started)))
		td.step(now, ev.Phase, "group empty after %s", roundDur(now.Sub(td.started)))
	case TeardownFailed:
		sb.events.add(now, levelError, "teardown of pgid %d failed: %v", pgid, ev.Err)
		td.step(now, ev.Phase, "failed: %v", ev.Err)
	}
	if sb == m.cur {
		m.fitDetail()
	}
}

func (m *Model) onTeardownDone(sb *sandboxState, msg teardownDoneMsg) {
	td := sb.teardowns[msg.pgid]
	if td == nil {
		return
	}
	td.finished = m.now()
	defer func() {
		if sb == m.cur {
			m.fitDetail()
		}
	}()
	if msg.err != nil {
		td.phase, td.err = TeardownFailed, msg.err
		sb.events.add(td.finished, levelError, "teardown of pgid %d stopped: %v", msg.pgid, msg.err)
		td.step(td.finished, TeardownFailed, "stopped: %v", msg.err)
		return
	}
	if td.phase != TeardownEmpty {
		td.phase = TeardownEmpty
		sb.events.add(td.finished, levelOK, "pgid %d empty after %s", msg.pgid, roundDur(td.finished.Sub(td.started)))
		td.step(td.finished, TeardownEmpty, "group empty after %s", roundDur(td.finished.Sub(td.started)))
	}
}

// label is the state column while a teardown runs.
func (td *teardown) label(now time.Time) string {
	switch td.phase {
	case TeardownTerm:
		return "SIGTERM…"
	case TeardownWaiting:
		left := td.deadline.Sub(now)
		if left < 0 {
			left = 0
		}
		return fmt.Sprintf("TERM %ds→KILL", int((left+time.Second-1)/time.Second))
	case TeardownKill:
		return "SIGKILL…"
	case TeardownEmpty:
		return "empty"
	}
	return "teardown failed"
}

func roundDur(d time.Duration) time.Duration {
	if d > 10*time.Second {
		return d.Round(time.Second)
	}
	return d.Round(100 * time.Millisecond)
}
