package ui

import (
	"context"
	"io"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// The tea.Cmds below are the only places that call the Source. Each has a
// timeout so a dead connection turns into an error message, not a hang.

const rpcTimeout = 10 * time.Second

// Commands that report back to a sandbox take it as a parameter, and their
// results come back as scopedMsg naming it: a late answer from sandbox A is
// applied to A even when the operator has switched to B.

func (m *Model) infoCmd(sb *sandboxState) tea.Cmd {
	src, ctx := sb.src, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		info, err := src.Info(c)
		return scopedMsg{sb, infoMsg{info: info, err: err}}
	}
}

func (m *Model) watchCmd(sb *sandboxState, gen int) tea.Cmd {
	src, ctx := sb.src, m.ctx
	return func() tea.Msg {
		ch, err := src.Watch(ctx)
		return scopedMsg{sb, watchStartedMsg{gen: gen, ch: ch, err: err}}
	}
}

func (m *Model) nextSnapshotCmd(sb *sandboxState, gen int, ch <-chan sandbox.Snapshot) tea.Cmd {
	ctx, src := m.ctx, sb.src
	return func() tea.Msg {
		select {
		case s, ok := <-ch:
			if !ok {
				return scopedMsg{sb, watchEndedMsg{gen: gen, err: watchErr(src)}}
			}
			return scopedMsg{sb, snapshotMsg{gen: gen, snap: s, ch: ch}}
		case <-ctx.Done():
			return nil
		}
	}
}

func (m *Model) spawnCmd(sb *sandboxState, argv []string) tea.Cmd {
	src, ctx, cwd := sb.src, m.ctx, sb.spec.Cwd
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		pid, err := src.Spawn(c, argv, cwd)
		return scopedMsg{sb, spawnedMsg{argv: argv, pid: pid, err: err}}
	}
}

func (m *Model) spawnTerminalCmd(sb *sandboxState, argv []string, rows, cols int) tea.Cmd {
	src, ctx := sb.src, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		pid, err := src.SpawnTerminal(c, argv, rows, cols)
		return scopedMsg{sb, spawnedMsg{argv: argv, terminal: true, rows: rows, cols: cols, pid: pid, err: err}}
	}
}

func (m *Model) signalCmd(sb *sandboxState, pgid int, sig syscall.Signal) tea.Cmd {
	src, ctx := sb.src, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		return scopedMsg{sb, signalDoneMsg{sig: sig, pgid: pgid, err: src.Signal(c, pgid, sig)}}
	}
}

func (m *Model) signalForegroundCmd(sb *sandboxState, termPid int, sig syscall.Signal) tea.Cmd {
	src, ctx := sb.src, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		pgid, err := src.SignalForeground(c, termPid, sig)
		return scopedMsg{sb, signalDoneMsg{sig: sig, pgid: pgid, termPid: termPid, err: err}}
	}
}

// teardownCmd runs the teardown on its own goroutine and relays progress
// through a channel that waitTeardownCmd drains one message at a time.
// It runs against sb's Source until it is done, whichever sandbox is on
// screen meanwhile.
func (m *Model) teardownCmd(sb *sandboxState, pgid int, grace time.Duration) tea.Cmd {
	src, ctx := sb.src, m.ctx
	ch := make(chan teardownUpdate, 64)
	go func() {
		err := src.Teardown(ctx, pgid, grace, func(ev TeardownEvent) {
			select {
			case ch <- teardownUpdate{ev: ev}:
			case <-ctx.Done():
			}
		})
		ch <- teardownUpdate{done: true, err: err}
		close(ch)
	}()
	return m.waitTeardownCmd(sb, pgid, ch)
}

func (m *Model) waitTeardownCmd(sb *sandboxState, pgid int, ch <-chan teardownUpdate) tea.Cmd {
	return func() tea.Msg {
		u, ok := <-ch
		if !ok {
			return nil
		}
		if u.done {
			return scopedMsg{sb, teardownDoneMsg{pgid: pgid, err: u.err}}
		}
		return scopedMsg{sb, teardownMsg{pgid: pgid, ev: u.ev, ch: ch}}
	}
}

// openCmd opens a sandbox's Source (dial, handshake) off the UI goroutine.
func (m *Model) openCmd(sb *sandboxState) tea.Cmd {
	open, ctx := sb.spec.Open, m.ctx
	return func() tea.Msg {
		src, err := open(ctx)
		return scopedMsg{sb, openedMsg{src: src, err: err}}
	}
}

// openOutputCmd and attachCmd open the detail pane's streams, from the
// sandbox on screen; they live as long as ctx, which the model cancels
// when the operator moves away.
func (m *Model) openOutputCmd(ctx context.Context, gen, pid int) tea.Cmd {
	src := m.cur.src
	return func() tea.Msg {
		r, err := src.Output(ctx, pid)
		return outputOpenedMsg{gen: gen, r: r, err: err}
	}
}

func (m *Model) attachCmd(ctx context.Context, gen, pid int) tea.Cmd {
	src := m.cur.src
	return func() tea.Msg {
		conn, err := src.Attach(ctx, pid)
		return attachedMsg{gen: gen, pid: pid, conn: conn, err: err}
	}
}

func resizeCmd(conn TerminalConn, pid, rows, cols int) tea.Cmd {
	return func() tea.Msg {
		return resizeDoneMsg{pid: pid, rows: rows, cols: cols, err: conn.Resize(rows, cols)}
	}
}

func closeCmd(c io.Closer) tea.Cmd {
	if c == nil {
		return nil
	}
	return func() tea.Msg {
		_ = c.Close() // detaching; nothing remote is signalled
		return nil
	}
}

func (m *Model) clockCmd(d time.Duration) tea.Cmd {
	return m.opts.Tick(d, func(t time.Time) tea.Msg { return clockMsg(t) })
}

// waitFrameCmd waits for streamed bytes, then for the rest of the current
// frame interval, so a burst of output costs one redraw; idle, it costs
// nothing.
func waitFrameCmd(ctx context.Context, wake <-chan struct{}, last time.Time) tea.Cmd {
	return func() tea.Msg {
		select {
		case <-wake:
		case <-ctx.Done():
			return nil
		}
		if d := time.Until(last.Add(frameInterval)); d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil
			}
		}
		return frameMsg{}
	}
}

// frameInterval caps streamed output at about 30 redraws a second.
const frameInterval = 33 * time.Millisecond

// watchErr asks a source why its watch ended, when it can say; the backend
// adapter keeps the cause (a dropped connection, a vanished sandbox).
func watchErr(src Source) error {
	if e, ok := src.(interface{ Err() error }); ok {
		return e.Err()
	}
	return nil
}
