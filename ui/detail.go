package ui

import (
	"context"
	"fmt"
	"io"
	"sandtop/sandbox"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

type detailKind int

const (
	detailNone detailKind = iota
	detailSession
	detailGroup
	detailTerminal
)

// detail is what the detail pane shows and the stream feeding it.
type detail struct {
	kind detailKind
	sid  int
	pgid int // detailGroup
	pid  int // the group's leader (output) or the terminal

	out  outputView
	term *termPane

	cancel context.CancelFunc
	reader OutputStream // group output
	conn   TerminalConn // terminal
	input  *inputQueue
	pump   *pump
	ended  bool
	err    error
	// teardown is the teardown of the group shown, once one began: its
	// steps stay below the output for as long as the pane shows the group.
	teardown *teardown
	// endedAt is when the group's command ended, as its state directory
	// says (zero while not known); readEnd reads it.
	endedAt time.Time
	readEnd func() time.Time
	// sizeBefore is the remote terminal's size before this attach resized
	// it (cols, rows), given back on detach; zero when not attached.
	sizeBefore [2]int
}

// close ends the stream; it runs outside Update (Close, and tests).
func (d *detail) close() {
	if d.cancel != nil {
		d.cancel()
	}
	if d.input != nil {
		d.input.stop()
	}
	if d.reader != nil {
		_ = d.reader.Close()
	}
	if d.conn != nil {
		_ = d.conn.Close()
	}
	d.term.close()
}

// closers hands the open streams to a tea.Cmd to close, and forgets them.
func (d *detail) detach() tea.Cmd {
	if d.cancel != nil {
		d.cancel()
	}
	if d.input != nil {
		d.input.stop()
	}
	var cmds []tea.Cmd
	if d.reader != nil {
		cmds = append(cmds, closeCmd(d.reader))
	}
	if d.conn != nil {
		cmds = append(cmds, closeCmd(d.conn))
	}
	d.term.close()
	*d = detail{}
	return tea.Batch(cmds...)
}

// target is what the selection on screen asks the detail pane to show.
func (m *Model) target() (kind detailKind, sid, pgid, pid int) {
	if m.pane == paneTerms {
		if t := m.cur.selectedTerminal(); t != nil {
			return detailTerminal, t.SID, 0, t.PID
		}
		return detailNone, 0, 0, 0
	}
	r, ok := m.cur.tree.selected()
	if !ok {
		return detailNone, 0, 0, 0
	}
	if r.kind == rowSession {
		return detailSession, r.sid, 0, 0
	}
	// A group on a terminal writes to the PTY, not to a stream of its own:
	// what it shows is the terminal's screen.
	if t := m.cur.terminalOfSession(r.sid); t != nil && r.group.Live() {
		return detailTerminal, t.SID, r.group.PGID, t.PID
	}
	g := r.group
	if d := &m.detail; !g.Live() && d.kind == detailGroup && d.pgid == g.PGID && d.reader != nil && d.err == nil {
		// The group ended (or was torn down) while the pane showed it: the
		// stream already open reads its output on to the end, and the
		// pane keeps it with the outcome below.
		return detailGroup, d.sid, d.pgid, d.pid
	}
	return detailGroup, r.sid, g.PGID, outputPID(g)
}

// outputPID is the pid the pane asks the Source for a group's output: its
// leader's; for a finished group the table names no leader of, its pgid,
// by which the Source reads back what the group kept. 0: nothing to ask.
func outputPID(g *sandbox.Group) int {
	switch {
	case g.LeaderPID != 0:
		return g.LeaderPID
	case !g.Live() && g.StateDir != "":
		return g.PGID
	}
	return 0
}

// syncDetail switches the detail pane to the selection of the sandbox on
// screen (code acting on another sandbox must not call it). The stream
// opens only once the selection has rested, so holding ↓ through a thousand
// groups opens none of them.
func (m *Model) syncDetail() tea.Cmd {
	if m.focus == focusAttached {
		return nil
	}
	kind, sid, pgid, pid := m.target()
	d := &m.detail
	if d.kind == kind && d.sid == sid && d.pgid == pgid && d.pid == pid {
		m.fitDetail() // the group may have settled, or its teardown moved on
		return nil
	}
	cmd := d.detach()
	m.detailGen++
	d.kind, d.sid, d.pgid, d.pid = kind, sid, pgid, pid
	d.out = newOutputView()
	d.out.maxBytes = m.opts.ScrollbackBytes
	m.fitDetail()
	if kind == detailTerminal {
		d.term = m.newTermPaneFor(pid)
	}
	if pid == 0 {
		return cmd
	}
	gen := m.detailGen
	delay := 120 * time.Millisecond
	if m.attachReq == pid {
		delay = 0
	}
	return tea.Batch(cmd, m.opts.Tick(delay, func(time.Time) tea.Msg { return openDetailMsg{gen: gen} }))
}

// newTermPaneFor sizes a viewing emulator like the remote PTY, so the
// picture matches what the program laid out.
func (m *Model) newTermPaneFor(pid int) *termPane {
	cols, rows := m.detailInner()
	if t := m.cur.terminalByPID(pid); t != nil && t.Cols > 0 && t.Rows > 0 {
		cols, rows = t.Cols, t.Rows
	}
	return newTermPane(max(1, cols), max(1, rows), m.opts.ScrollbackBytes)
}

func (m *Model) openDetail() tea.Cmd {
	d := &m.detail
	ctx, cancel := context.WithCancel(m.ctx)
	d.cancel = cancel
	if d.kind == detailTerminal {
		return m.attachCmd(ctx, m.detailGen, d.pid)
	}
	d.readEnd = m.endTimeReader(ctx, d.pgid)
	return m.openOutputCmd(ctx, m.detailGen, d.pid)
}

// fitDetail gives a group's output the rows its summary above and its
// outcome below leave, and picks up a teardown of the group shown.
func (m *Model) fitDetail() {
	d := &m.detail
	if d.kind == detailGroup {
		if td := m.cur.teardowns[d.pgid]; td != nil {
			d.teardown = td
		}
	}
	_, h := m.detailInner()
	d.out.setHeight(h - m.detailHeaderLines())
}

// endTimeReader reads when the group's command ended, from the state
// directory the group published; nil where the Source cannot tell. It
// blocks: the output's pump calls it once the output has ended.
func (m *Model) endTimeReader(ctx context.Context, pgid int) func() time.Time {
	desc, ok := m.cur.src.(GroupDescriber)
	g := m.groupByPGID(pgid)
	if !ok || g == nil || g.StateDir == "" {
		return nil
	}
	dir := g.StateDir
	return func() time.Time {
		if ctx.Err() != nil {
			return time.Time{} // the pane moved on: its stream was closed
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		details, err := desc.GroupDetails(ctx, dir)
		if err != nil {
			return time.Time{}
		}
		return details.Ended
	}
}

func (m *Model) onOutputOpened(msg outputOpenedMsg) tea.Cmd {
	if msg.gen != m.detailGen {
		if msg.r != nil {
			return closeCmd(msg.r)
		}
		return nil
	}
	d := &m.detail
	if msg.err != nil {
		d.err = msg.err
		m.fitDetail()
		return nil
	}
	d.reader = msg.r
	d.pump = startOutputPump(msg.r, m.wake, d.readEnd)
	return m.armFrame()
}

func (m *Model) onAttached(msg attachedMsg) tea.Cmd {
	if msg.gen != m.detailGen {
		if msg.conn != nil {
			return closeCmd(msg.conn)
		}
		return nil
	}
	if msg.err != nil {
		m.detail.err = msg.err
		if m.attachReq == msg.pid {
			m.attachReq = 0
			m.cur.events.add(m.now(), levelError, "attach to terminal %d failed: %v", msg.pid, msg.err)
		}
		return nil
	}
	d := &m.detail
	d.conn = msg.conn
	d.input = startInput(msg.conn, m.wake)
	d.term.relayChanges(m.wake)
	d.pump = startPump(msg.conn, m.wake, d.term.term)
	cmds := []tea.Cmd{m.armFrame()}
	if m.attachReq == msg.pid {
		m.attachReq = 0
		cmds = append(cmds, m.enterAttached())
	}
	return tea.Batch(cmds...)
}

// armFrame makes sure one frame wait is pending while a stream is open.
func (m *Model) armFrame() tea.Cmd {
	if m.frameArmed || m.detail.pump == nil {
		return nil
	}
	m.frameArmed = true
	return waitFrameCmd(m.ctx, m.wake, m.lastFrame)
}

// drainStreams moves what the pumps read into the views: one frame.
func (m *Model) drainStreams() tea.Cmd {
	d := &m.detail
	if d.pump == nil {
		return nil
	}
	p := d.pump
	data, times, dropped, done, err := p.take()
	if dropped > 0 {
		m.cur.events.add(m.now(), levelWarn, "output flood: skipped %d bytes to stay live", dropped)
	}
	if len(data) > 0 {
		d.out.appendPieces(data, times, m.now())
	}
	var cmds []tea.Cmd
	if werr := d.input.failure(); werr != nil && !d.ended {
		m.cur.events.add(m.now(), levelError, "input to terminal %d failed: %v", d.pid, werr)
		d.ended, d.err = true, werr
	}
	if done {
		d.pump, d.ended, d.err = nil, true, err
		d.endedAt = p.endedAt()
		m.fitDetail() // the outcome goes below the output
		if m.focus == focusAttached {
			m.cur.events.add(m.now(), levelInfo, "terminal %d ended; detached", d.pid)
			m.focus = focusList
			cmds = append(cmds, m.unzoomAfterAttach())
		}
		return tea.Batch(cmds...)
	}
	cmds = append(cmds, m.armFrame())
	return tea.Batch(cmds...)
}

// enterAttached hands the keyboard to the terminal and sizes the remote
// PTY to the pane.
func (m *Model) enterAttached() tea.Cmd {
	d := &m.detail
	if d.kind != detailTerminal || d.conn == nil {
		return nil
	}
	m.focus, m.attachedFrom = focusAttached, m.pane
	if !m.readOnly(m.cur) {
		d.term.replies.set(d.input) // the program's terminal queries get answers
	}
	m.cur.events.add(m.now(), levelInfo, "attached to terminal %d (%s detaches)", d.pid, m.keys.Detach.Help().Key)
	w, h := m.detailInner()
	t := m.cur.terminalByPID(d.pid)
	d.sizeBefore = [2]int{}
	if t != nil {
		d.sizeBefore = [2]int{t.Cols, t.Rows}
	}
	// A pane narrower than the remote terminal would shrink it for every
	// other client: zoom the pane instead, for as long as this attach lasts.
	if t != nil && !m.zoomed && (t.Cols > w || t.Rows > h) {
		m.zoomed, m.attachZoomed = true, true
		m.lay = computeLayout(m.width, m.height, len(m.cur.terms), m.zoomed)
		w, h = m.detailInner()
	}
	d.term.resize(w, h)
	return m.resizeRemote()
}

// unzoomAfterAttach gives the list back its room when attaching zoomed
// the pane.
func (m *Model) unzoomAfterAttach() tea.Cmd {
	if !m.attachZoomed {
		return nil
	}
	m.zoomed, m.attachZoomed = false, false
	m.lay = computeLayout(m.width, m.height, len(m.cur.terms), m.zoomed)
	return m.layoutChanged()
}

// restoreRemoteSize gives the remote terminal back the size it had before
// the attach, so other clients find it as they left it, unless the
// operator chose to keep sandtop's size (KeepTerminalSize).
// It returns what it did, for the detach's line in the log.
func (m *Model) restoreRemoteSize() (tea.Cmd, string) {
	d := &m.detail
	before := d.sizeBefore
	d.sizeBefore = [2]int{}
	if d.conn == nil || d.term == nil || before[0] < 1 || before[1] < 1 {
		return nil, ""
	}
	cols, rows := d.term.size()
	switch {
	case cols == before[0] && rows == before[1]:
		return nil, ""
	case m.opts.KeepTerminalSize:
		return nil, fmt.Sprintf("; it stays %dx%d", cols, rows)
	}
	d.term.resize(before[0], before[1])
	return resizeCmd(d.conn, d.pid, before[1], before[0]), fmt.Sprintf("; back to its %dx%d", before[0], before[1])
}

func (m *Model) resizeRemote() tea.Cmd {
	d := &m.detail
	if d.conn == nil || d.term == nil {
		return nil
	}
	cols, rows := d.term.size()
	return resizeCmd(d.conn, d.pid, rows, cols)
}

// inputQueue writes attached-terminal input on one goroutine, so keys
// reach the program in the order they were typed and Update never blocks
// on the network.
type inputQueue struct {
	ch      chan []byte
	mu      sync.Mutex
	stopped bool
	err     error
	wake    chan<- struct{}
}

func startInput(w io.Writer, wake chan<- struct{}) *inputQueue {
	q := &inputQueue{ch: make(chan []byte, 1024), wake: wake}
	go func() {
		for b := range q.ch {
			if _, err := w.Write(b); err != nil {
				q.mu.Lock()
				q.err = err
				q.mu.Unlock()
				select {
				case wake <- struct{}{}:
				default:
				}
				for range q.ch { // drain so senders never block
				}
				return
			}
		}
	}()
	return q
}

// send queues bytes; it reports false when the queue is full (the remote
// stopped reading), rather than blocking the UI.
func (q *inputQueue) send(b []byte) bool {
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return false
	}
	select {
	case q.ch <- b:
		return true
	default:
		return false
	}
}

func (q *inputQueue) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.stopped = true
		close(q.ch)
	}
}

func (q *inputQueue) failure() error {
	if q == nil {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.err
}
