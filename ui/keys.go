package ui

import (
	"fmt"
	"sort"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// handleKey routes a key by focus: a dialog first, then the attached
// terminal (which takes every key but detach), then the lists.
func (m *Model) handleKey(msg tea.KeyPressMsg) tea.Cmd {
	if m.dialog != nil {
		return m.dialogKey(msg)
	}
	if m.fleet != nil {
		return m.fleetKey(msg)
	}
	if m.focus == focusAttached {
		return m.attachedKey(msg)
	}
	cmd, _ := m.dispatch(msg)
	return cmd
}

// attachedKey forwards everything, Ctrl-C included, except the detach key.
func (m *Model) attachedKey(msg tea.KeyPressMsg) tea.Cmd {
	if cmd, ok := m.dispatch(msg); ok {
		return cmd
	}
	if m.readOnly(m.cur) {
		m.refuse(m.cur, "input")
		return nil
	}
	return m.sendInput(EncodeKey(tea.Key(msg), m.detail.term.modes()))
}

// sendInput writes bytes to the attached terminal.
func (m *Model) sendInput(b []byte) tea.Cmd {
	if len(b) == 0 {
		return nil
	}
	if !m.detail.input.send(b) {
		m.setStatus(levelWarn, "terminal is not reading input; key dropped")
	}
	return nil
}

// handlePaste gives a paste to the attached terminal (bracketed when the
// program asked for it) or, in a dialog, to its text field.
func (m *Model) handlePaste(msg tea.PasteMsg) tea.Cmd {
	switch {
	case m.dialog != nil:
		return m.dialogPaste(msg)
	case m.fleet != nil && m.fleet.typing:
		m.fleet.filter += msg.Content
		return nil
	case m.focus != focusAttached:
		return nil
	case m.readOnly(m.cur):
		m.refuse(m.cur, "paste")
		return nil
	}
	return m.sendInput(EncodePaste(msg.Content, m.detail.term.modes()))
}

// isText is a key that types its text: printable, without Ctrl or Alt.
func isText(msg tea.KeyPressMsg) bool {
	return msg.Text != "" && !msg.Mod.Contains(tea.ModCtrl) && !msg.Mod.Contains(tea.ModAlt)
}

func (m *Model) detachTerminal() tea.Cmd {
	m.focus = focusList
	m.pane = m.attachedFrom // back where the operator attached from
	m.detail.term.replies.set(nil)
	resize, note := m.restoreRemoteSize()
	m.cur.events.add(m.now(), levelInfo, "detached from terminal %d (it keeps running%s)", m.detail.pid, note)
	return tea.Batch(resize, m.unzoomAfterAttach())
}

// scrollOutputSideways moves unwrapped output half a pane left (dir < 0)
// or right.
func (m *Model) scrollOutputSideways(dir int) tea.Cmd {
	w, _ := m.detailInner()
	m.detail.out.scrollX(dir * max(tabWidth, w/2))
	return nil
}

// nextMatch moves to the next (dir > 0) or previous search match.
func (m *Model) nextMatch(dir int) tea.Cmd {
	if !m.detail.out.nextMatch(dir) {
		m.setStatus(levelInfo, "no matches")
	}
	return nil
}

func (m *Model) toggleZoom() tea.Cmd {
	m.zoomed, m.attachZoomed = !m.zoomed, false
	m.lay = computeLayout(m.width, m.height, len(m.cur.terms), m.zoomed)
	return m.layoutChanged()
}

// back clears the groups' filter, or leaves the output pane.
func (m *Model) back() tea.Cmd {
	sb := m.cur
	if sb.tree.filter != "" && m.pane == paneTree {
		sb.tree.filter = ""
		sb.tree.rebuild()
		return m.syncDetail()
	}
	m.focus = focusList
	return nil
}

// sortBy orders the group list by k, or reverses it when it already is;
// the cursor stays on the same row.
func (m *Model) sortBy(k sortKey) tea.Cmd {
	sb := m.cur
	sb.tree.order = sb.tree.order.toggle(k)
	sb.tree.rebuild()
	return m.syncDetail()
}

func (m *Model) quit() tea.Cmd {
	if n := m.allActiveTeardowns(); n > 0 {
		m.openDialog(m.cur, newConfirm("Quit?",
			[]string{fmt.Sprintf("%d teardown(s) in progress will stop escalating:", n),
				"no further SIGKILL will be sent. Nothing else is signalled."},
			"quit", false, func(m *Model) tea.Cmd { return tea.Quit }))
		return nil
	}
	return tea.Quit
}

// cyclePane moves focus tree → terminals → output → tree.
func (m *Model) cyclePane(dir int) tea.Cmd {
	order := []struct {
		f focus
		p pane
	}{{focusList, paneTree}, {focusList, paneTerms}, {focusOutput, paneTree}}
	cur := 0
	for i, o := range order {
		if o.f == m.focus && (o.f == focusOutput || o.p == m.pane) {
			cur = i
		}
	}
	next := order[(cur+dir+len(order))%len(order)]
	if next.f == focusOutput {
		if m.detail.kind != detailGroup {
			next = order[(cur+2*dir+2*len(order))%len(order)]
		}
	}
	m.focus = next.f
	if next.f == focusList {
		m.pane = next.p
	}
	return m.syncDetail()
}

func (m *Model) listHeight() int {
	if m.pane == paneTerms {
		_, h := m.lay.terms.inner()
		return max(1, h-1)
	}
	_, h := m.lay.tree.inner()
	return max(1, h-1)
}

func (m *Model) moveCursor(delta int) tea.Cmd {
	sb := m.cur
	if m.pane == paneTerms {
		sb.termCursor = max(0, min(len(sb.terms)-1, sb.termCursor+delta))
	} else {
		sb.tree.move(delta)
	}
	return m.syncDetail()
}

// fold collapses or expands the row under the cursor: a session hides its
// groups, a group shows its processes.
func (m *Model) fold(shut bool) {
	sb := m.cur
	r, ok := sb.tree.selected()
	if !ok || m.pane != paneTree {
		return
	}
	switch r.kind {
	case rowSession:
		sb.tree.folded[r.sid] = shut
	case rowGroup:
		if shut && !sb.tree.expanded[r.group.PGID] && !r.solo {
			sb.tree.folded[r.sid] = true
			sb.tree.rebuild()
			m.selectSession(r.sid)
			return
		}
		sb.tree.expanded[r.group.PGID] = !shut
	case rowProcess:
		if shut {
			sb.tree.expanded[r.group.PGID] = false
		}
	}
	sb.tree.rebuild()
}

func (m *Model) selectSession(sid int) {
	for i, r := range m.cur.tree.rows {
		if r.kind == rowSession && r.sid == sid {
			m.cur.tree.setCursor(i)
		}
	}
}

func (m *Model) toggleMark() {
	sb := m.cur
	g := sb.tree.selectedGroup()
	if m.pane != paneTree || g == nil {
		return
	}
	if !g.Live() {
		m.setStatus(levelInfo, fmt.Sprintf("pgid %d has settled; nothing to mark", g.PGID))
		return
	}
	if sb.marks[g.PGID] {
		delete(sb.marks, g.PGID)
	} else {
		sb.marks[g.PGID] = true
	}
}

// open attaches to a terminal or focuses a group's output.
func (m *Model) open() tea.Cmd {
	sb := m.cur
	if m.pane == paneTerms {
		if t := sb.selectedTerminal(); t != nil {
			return m.attachTo(t.PID)
		}
		return nil
	}
	r, ok := sb.tree.selected()
	if !ok {
		return nil
	}
	if r.kind == rowSession {
		sb.tree.folded[r.sid] = !sb.tree.folded[r.sid]
		sb.tree.rebuild()
		return nil
	}
	if kind, _, _, pid := m.target(); kind == detailTerminal {
		return m.attachTo(pid) // a group on a terminal: attach to it
	}
	m.focus = focusOutput
	return m.syncDetail()
}

// attachTo attaches to terminal pid, opening its connection first if the
// detail pane does not hold one yet.
func (m *Model) attachTo(pid int) tea.Cmd {
	if m.detail.kind == detailTerminal && m.detail.pid == pid && m.detail.conn != nil {
		return m.enterAttached()
	}
	m.attachReq = pid
	cmd := m.syncDetail()
	if m.detail.kind == detailTerminal && m.detail.pid == pid && m.detail.cancel == nil {
		// Already selected, connection still opening or failed: retry now.
		return tea.Batch(cmd, m.openDetail())
	}
	return cmd
}

// signalTarget says where a signal would go from the current selection.
type signalTarget struct {
	pgid    int // a group
	termPid int // or the foreground group of this terminal
	label   string
}

func (m *Model) currentSignalTarget() (signalTarget, bool) {
	if m.pane == paneTerms {
		t := m.cur.selectedTerminal()
		if t == nil {
			return signalTarget{}, false
		}
		return signalTarget{termPid: t.PID, label: fmt.Sprintf("foreground group of terminal %d (now pgid %d)", t.PID, t.ForegroundPGID)}, true
	}
	g := m.cur.tree.selectedGroup()
	if g == nil || !g.Live() {
		return signalTarget{}, false
	}
	return signalTarget{pgid: g.PGID, label: fmt.Sprintf("pgid %d (%s, %s)", g.PGID, command(g), liveCount(g, "member"))}, true
}

func (m *Model) openSignalMenu() tea.Cmd {
	t, ok := m.currentSignalTarget()
	if !ok {
		m.setStatus(levelInfo, "select a live group or a terminal to signal")
		return nil
	}
	m.openDialog(m.cur, newSignalMenu(t))
	return nil
}

func (m *Model) askTeardown() tea.Cmd {
	sb := m.cur
	var g *sandbox.Group
	if m.pane == paneTerms {
		if t := sb.selectedTerminal(); t != nil {
			g = sb.liveGroup(t.PID)
		}
	} else {
		g = sb.tree.selectedGroup()
	}
	if g == nil || !g.Live() {
		m.setStatus(levelInfo, "select a live group to tear down")
		return nil
	}
	pgid := g.PGID
	body := []string{
		fmt.Sprintf("pgid %d: %s", pgid, command(g)),
		fmt.Sprintf("%s · %s", liveCount(g, "live member"), g.Origin),
		"",
		fmt.Sprintf("SIGTERM, wait %s, then SIGKILL until the group is empty.", m.opts.Grace),
	}
	act := func(m *Model) tea.Cmd {
		if g := sb.liveGroup(pgid); g != nil {
			return m.startTeardown(sb, g)
		}
		m.setStatus(levelInfo, fmt.Sprintf("pgid %d is already gone", pgid))
		return nil
	}
	if m.opts.NoConfirm.Teardown { // the operator turned this one off in the config
		return act(m)
	}
	m.openDialog(sb, newConfirm("Tear down group?", m.inContext(sb, body), "tear down", true, act))
	return nil
}

func (m *Model) askBulkTeardown() tea.Cmd {
	sb := m.cur
	var targets []sandbox.Group
	for pgid := range sb.marks {
		if g := sb.liveGroup(pgid); g != nil {
			targets = append(targets, *g)
		}
	}
	if len(targets) == 0 {
		m.setStatus(levelInfo, "mark groups with space first")
		return nil
	}
	sort.Slice(targets, func(i, j int) bool { return targets[i].PGID < targets[j].PGID })
	d := newBulkDialog(targets, m.opts.Grace)
	d.where, d.noCount = m.contextLine(sb), m.opts.NoConfirm.BulkTeardown
	m.openDialog(sb, d)
	return nil
}

// inContext adds which sandbox a confirmation is about (sb) when there are
// several, so "yes" is never said to the wrong one.
func (m *Model) inContext(sb *sandboxState, body []string) []string {
	if l := m.contextLine(sb); l != "" {
		return append([]string{l, ""}, body...)
	}
	return body
}

func (m *Model) contextLine(sb *sandboxState) string {
	if !m.multi() {
		return ""
	}
	return "in sandbox " + sb.targetName()
}
