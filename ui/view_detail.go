package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// groupDetailHeader is how many lines a group's summary takes above its
// output.
const groupDetailHeader = 3

func (m *Model) detailHeaderLines() int {
	if m.detail.kind == detailGroup {
		return groupDetailHeader
	}
	return 0
}

func (m *Model) viewDetail() string {
	r := m.lay.detail
	w, h := r.inner()
	st := m.st
	d := &m.detail
	focused := m.focus == focusOutput || m.focus == focusAttached
	var title string
	var lines []string
	switch d.kind {
	case detailNone:
		title = "Detail"
		lines = []string{st.muted.Render("Select a group or a terminal.")}
	case detailSession:
		title = fmt.Sprintf("Session %d", d.sid)
		lines = m.sessionSummary(d.sid)
	case detailGroup:
		title, lines = m.groupDetail(w, h)
	case detailTerminal:
		title, lines = m.terminalDetail(w, h)
	}
	return box(st, title, lines, r.w, r.h, focused)
}

func (m *Model) sessionSummary(sid int) []string {
	var lines []string
	for _, r := range m.cur.tree.rows {
		if r.kind == rowGroup && r.sid == sid {
			lines = append(lines, fmt.Sprintf("pgid %-7d %-14s %s", r.group.PGID, r.group.State, command(r.group)))
		}
	}
	if t := m.cur.terminalByPID(sid); t != nil {
		lines = append(lines, "", fmt.Sprintf("terminal %d, foreground pgid %d", t.PID, t.ForegroundPGID))
	}
	return lines
}

func (m *Model) groupDetail(w, h int) (string, []string) {
	st := m.st
	d := &m.detail
	g := m.groupByPGID(d.pgid)
	title := st.title.Render(fmt.Sprintf("Output · pgid %d", d.pgid))
	var lines []string
	if g != nil {
		lines = append(lines, fmt.Sprintf("%s · %s · %s · sid %d", m.stateCell(g, m.now()), count(g.LiveMembers(), "member"), m.originCell(g.Origin), g.SID))
		var pids []string
		for _, p := range g.Members {
			pids = append(pids, fmt.Sprintf("%d %s", p.PID, safetext.Line(p.Comm)))
		}
		lines = append(lines, st.muted.Render("members: "+strings.Join(pids, ", ")))
	} else {
		lines = append(lines, st.settled.Render("gone"), "")
	}
	o := &d.out
	status := st.ok.Render("● follow")
	if !o.follow {
		status = st.warning.Render("⏸ paused") + st.muted.Render(" (f follows)")
	}
	switch {
	case o.wrap:
		status += st.muted.Render(" · wrap")
	case o.xoff > 0:
		status += st.muted.Render(fmt.Sprintf(" · col %d", o.xoff+1))
	}
	if o.timestamps {
		if o.asReceived {
			// The sandbox kept no arrival times for some of this output.
			status += st.muted.Render(" · times as received")
		} else {
			status += st.muted.Render(" · times")
		}
	}
	if o.query != "" {
		cur := 0
		if len(o.matches) > 0 {
			cur = o.current + 1
		}
		status += st.muted.Render(fmt.Sprintf(" · /%s %d/%d", o.query, cur, len(o.matches)))
	}
	// The rule runs to the pane's edge and no further, so it never ends
	// cut short with an ellipsis.
	if ansi.StringWidth(status) > w-4 {
		status = fit(status, max(0, w-4))
	}
	rest := max(0, w-4-ansi.StringWidth(status))
	lines = append(lines, st.border.Render(strings.Repeat("─", 2))+" "+status+" "+st.border.Render(strings.Repeat("─", rest)))
	switch {
	case d.pid == 0 && g != nil && g.State == groupstate.Settled:
		// The daemon streams a group's output only while it runs.
		lines = append(lines, st.muted.Render(fmt.Sprintf("Finished: its output is no longer streamed ('sandtop logs %d' shows what the sandbox kept).", g.PGID)))
	case d.pid == 0:
		lines = append(lines, st.muted.Render("No output stream: this group was not started through the daemon."))
	case d.err != nil:
		lines = append(lines, st.danger.Render("output: "+safetext.Line(d.err.Error())))
	default:
		lines = append(lines, o.render(st, w)...)
		if d.ended && len(lines) < h {
			lines = append(lines, st.muted.Render("── end of output ──"))
		}
	}
	return title, lines
}

func (m *Model) groupByPGID(pgid int) *sandbox.Group {
	sb := m.cur
	for i := range sb.tree.groups {
		if sb.tree.groups[i].PGID == pgid {
			return &sb.tree.groups[i]
		}
	}
	return nil
}

func (m *Model) terminalDetail(w, h int) (string, []string) {
	st := m.st
	d := &m.detail
	var title string
	if m.focus == focusAttached {
		title = st.detach.Render(" "+m.keys.Detach.Help().Key+" detach ") + " " +
			st.accent.Render(fmt.Sprintf("attached to terminal %d", d.pid)) + st.muted.Render(" · Ctrl-C goes to the program")
	} else {
		title = st.title.Render(fmt.Sprintf("Terminal %d", d.pid)) + st.muted.Render(" · enter attaches")
	}
	switch {
	case d.err != nil:
		return title, []string{st.danger.Render("attach: " + safetext.Line(d.err.Error()))}
	case d.term == nil:
		return title, nil
	}
	lines := renderScreen(d.term.term.Snapshot(), w, h, m.focus == focusAttached)
	if d.ended {
		lines[len(lines)-1] = st.muted.Render("── terminal ended ──")
	}
	return title, lines
}
