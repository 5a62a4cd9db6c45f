package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// detailHeaderLines is how many rows a group's pane takes besides its
// output: the summary above it and the outcome below it (see groupAbove
// and groupBelow).
func (m *Model) detailHeaderLines() int {
	if m.detail.kind != detailGroup {
		return 0
	}
	g := m.groupByPGID(m.detail.pgid)
	_, h := m.detailInner()
	above := m.groupAbove(g, 0)
	return len(above) + len(m.groupBelow(g, h-len(above)))
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
	lines := m.groupAbove(g, w)
	below := m.groupBelow(g, h-len(lines))
	o := &d.out
	switch {
	case d.pid == 0 && !finished(g):
		lines = append(lines, st.muted.Render("No output stream: this group was not started through the daemon."))
	case d.err != nil:
		lines = append(lines, st.danger.Render("output: "+safetext.Line(d.err.Error())))
	default:
		lines = append(lines, o.render(st, w)...)
		if d.ended && len(below) == 0 && len(lines) < h {
			lines = append(lines, st.muted.Render("── end of output ──"))
		}
	}
	return title, append(lines, below...)
}

// finished says the group has no live member left (nil: it left the
// table altogether).
func finished(g *sandbox.Group) bool { return g != nil && g.State == groupstate.Settled }

// groupAbove is the group's summary and the output's status rule. A
// finished group with no member left has its summary on the rule: the
// rows go to its output. w is the pane's width (0: only the count counts).
func (m *Model) groupAbove(g *sandbox.Group, w int) []string {
	st := m.st
	o := &m.detail.out
	var lines []string
	var status string
	switch {
	case g == nil:
		lines = append(lines, st.settled.Render("gone"), "")
	case finished(g) && len(g.Members) == 0:
		status = m.stateCell(g, m.now()) + st.muted.Render(" · ") + m.originCell(g.Origin) + st.muted.Render(" · ")
	default:
		lines = append(lines, fmt.Sprintf("%s · %s · %s · sid %d", m.stateCell(g, m.now()), count(g.LiveMembers(), "member"), m.originCell(g.Origin), g.SID))
		var pids []string
		for _, p := range g.Members {
			pids = append(pids, fmt.Sprintf("%d %s", p.PID, safetext.Line(p.Comm)))
		}
		lines = append(lines, st.muted.Render("members: "+strings.Join(pids, ", ")))
	}
	if w <= 0 {
		return append(lines, "")
	}
	if o.follow {
		status += st.ok.Render("● follow")
	} else {
		status += st.warning.Render("⏸ paused") + st.muted.Render(" (f follows)")
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
	return append(lines, st.border.Render(strings.Repeat("─", 2))+" "+status+" "+st.border.Render(strings.Repeat("─", rest)))
}

// groupBelow is what the pane says under a group's output: that nothing
// was kept, where that is so; the steps of its teardown; and, once the
// group is finished and its output read to the end, how its command
// ended. It takes at most rows-1 rows, the newest kept, so one row of
// output stays in view.
func (m *Model) groupBelow(g *sandbox.Group, rows int) []string {
	st := m.st
	d := &m.detail
	var lines []string
	over := finished(g) && (d.ended || d.err != nil || d.pid == 0)
	if over && d.err == nil && d.out.count() == 0 && d.out.dropped == 0 {
		lines = append(lines, st.muted.Render(fmt.Sprintf("It kept no output: 'sandtop logs %d' has none either.", g.PGID)))
	}
	if td := d.teardown; td != nil {
		for _, s := range td.steps {
			sty := st.muted
			switch s.phase {
			case TeardownKill:
				sty = st.warning
			case TeardownEmpty:
				sty = st.ok
			case TeardownFailed:
				sty = st.danger
			}
			lines = append(lines, sty.Render(fmt.Sprintf("── %s teardown: %s", s.at.Format("15:04:05"), safetext.Line(s.text))))
		}
	}
	if over {
		lines = append(lines, m.exitLine(g))
	}
	if keep := max(0, rows-1); len(lines) > keep {
		lines = lines[len(lines)-keep:]
	}
	return lines
}

// exitLine says how a finished group's command ended, and when where the
// state directory says: the facts 'sandtop describe' reports.
func (m *Model) exitLine(g *sandbox.Group) string {
	st := m.st
	var text string
	sty := st.muted
	switch e := g.Exit; {
	case e != nil && e.Signal != "":
		text, sty = "killed by "+safetext.Line(e.Signal), st.danger
	case e != nil && e.Code == 0:
		text, sty = "exited 0", st.ok
	case e != nil:
		text, sty = fmt.Sprintf("exited %d", e.Code), st.danger
	default:
		text = "finished; its status was not published"
	}
	if t := m.detail.endedAt; !t.IsZero() {
		t, now := t.Local(), m.now().Local()
		layout := "15:04:05"
		if t.Year() != now.Year() || t.YearDay() != now.YearDay() {
			layout = "2006-01-02 15:04:05"
		}
		text += " · ended " + t.Format(layout)
	}
	return sty.Render("── " + text + " ──")
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
