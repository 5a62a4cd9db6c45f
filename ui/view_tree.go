package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// treeColumn is one column of the group tree. Optional columns are dropped,
// lowest priority first, when the pane is too narrow.
type treeColumn struct {
	id    string
	title string
	width int
	right bool
}

var (
	colMark    = treeColumn{"mark", "", 1, false}
	colID      = treeColumn{"id", "PGID", 13, false}
	colState   = treeColumn{"state", "STATE", 13, false}
	colMembers = treeColumn{"n", "N", 3, true}
	colWho     = treeColumn{"who", "BY", 7, false}
	colAge     = treeColumn{"age", "AGE", 4, true}
	colCPU     = treeColumn{"cpu", "CPU%", 5, true}
	colRSS     = treeColumn{"rss", "RSS", 5, true}
	colExit    = treeColumn{"exit", "EXIT", 4, true}
	colTTY     = treeColumn{"tty", "TTY", 6, false}
	colTag     = treeColumn{"tag", "TAG", 12, false}
	// colStuck is why a group looks stuck (package stuck's rules).
	colStuck = treeColumn{"stuck", "STUCK", 16, false}
	// optionalCols in the order they are given up.
	optionalCols = []treeColumn{colTag, colWho, colMembers, colAge, colCPU, colRSS, colExit, colTTY, colStuck}
)

const minCommandWidth = 14

// stuckColumn says whether the tree on screen has room for STUCK.
func (m *Model) stuckColumn() bool {
	w, _ := m.lay.tree.inner()
	cols, _ := treeColumns(w)
	return slices.Contains(cols, colStuck)
}

// exitColumn says whether the tree on screen has room for EXIT.
func (m *Model) exitColumn() bool {
	w, _ := m.lay.tree.inner()
	cols, _ := treeColumns(w)
	return slices.Contains(cols, colExit)
}

// treeColumns picks the columns that fit in w cells, leaving the rest to
// the command.
func treeColumns(w int) (cols []treeColumn, cmdWidth int) {
	cols = []treeColumn{colMark, colID, colState}
	used := colMark.width + colID.width + colState.width + 3
	for _, c := range optionalCols {
		if used+c.width+1+minCommandWidth > w {
			break
		}
		cols = append(cols, c)
		used += c.width + 1
	}
	return cols, max(0, w-used)
}

func (m *Model) viewTree() string {
	sb := m.cur
	r := m.lay.tree
	w, h := r.inner()
	cols, cmdW := treeColumns(w)
	lines := make([]string, 0, h)
	lines = append(lines, m.st.muted.Render(m.treeHeader(cols, cmdW)))
	body := h - 1
	sb.tree.scrollInto(body)
	now := m.now()
	focused := m.focus == focusList && m.pane == paneTree
	for i := sb.tree.offset; i < len(sb.tree.rows) && len(lines) < h; i++ {
		line := m.treeRow(sb.tree.rows[i], cols, cmdW, now)
		if i == sb.tree.cursor {
			line = "›" + ansiCutLeft(line, 1) // visible without colour too
			if focused {
				line = m.st.selected.Render(fit(stripStyle(line), w))
			} else {
				line = m.st.selectedDim.Render(fit(stripStyle(line), w))
			}
		}
		lines = append(lines, line)
	}
	if len(sb.tree.rows) == 0 {
		msg := "no process groups yet — press r to run one, t for a terminal"
		if sb.tree.filter != "" {
			msg = "no group matches the filter (esc clears it)"
		}
		if sb.conn != connUp {
			msg = "waiting for the process table…"
		}
		if sb.state == openFailed {
			msg = "unreachable: " + errText(sb.openErr) + " — c picks another sandbox"
		}
		lines = append(lines, m.st.muted.Render(msg))
	}
	// The count is of the rows listed; finished ones are said apart.
	title := fmt.Sprintf("Groups %d", len(sb.tree.groups))
	if done := len(sb.tree.groups) - m.liveGroupCount(); done > 0 {
		title += fmt.Sprintf(" · %d finished", done)
	}
	if o := sb.tree.order; o != (sortOrder{}) {
		title += " · by " + o.key.String() + o.arrow()
	}
	if sb.tree.filter != "" {
		title += " · filter " + m.st.match.Render(sb.tree.filter)
		if err := sb.tree.filterErr; err != nil {
			title += " " + m.st.danger.Render("bad regex: "+safetext.Line(err.Error()))
		}
	}
	if n := len(sb.marks); n > 0 {
		title += " · " + m.st.marked.Render(fmt.Sprintf("%d marked", n))
	}
	return box(m.st, m.st.title.Render(title), lines, r.w, r.h, focused)
}

func (m *Model) liveGroupCount() int {
	n := 0
	for i := range m.cur.tree.groups {
		if m.cur.tree.groups[i].State != groupstate.Settled {
			n++
		}
	}
	return n
}

func (m *Model) treeHeader(cols []treeColumn, cmdW int) string {
	sb := m.cur
	var b strings.Builder
	for _, c := range cols {
		title := c.title
		if c.id == sb.tree.order.key.column() && sb.tree.order != (sortOrder{}) {
			title += sb.tree.order.arrow()
		}
		b.WriteString(pad(title, c.width, c.right))
		b.WriteByte(' ')
	}
	b.WriteString("COMMAND")
	return b.String()
}

// treeRow renders one row in the chosen columns.
func (m *Model) treeRow(r row, cols []treeColumn, cmdW int, now time.Time) string {
	sb := m.cur
	st := m.st
	if r.kind == rowSession {
		glyph := "-"
		if sb.tree.folded[r.sid] {
			glyph = "+"
		}
		label := fmt.Sprintf("%s session %d", glyph, r.sid)
		return "  " + st.title.Render(label) + st.muted.Render(fmt.Sprintf("  %d group%s", r.groups, plural(r.groups)))
	}
	g := r.group
	branch := "├"
	switch {
	case r.solo:
		branch = " "
	case r.last:
		branch = "└"
	}
	cells := map[string]string{}
	if r.kind == rowGroup {
		open := "+"
		if sb.tree.expanded[g.PGID] {
			open = "-"
		}
		cells["mark"] = " "
		if sb.marks[g.PGID] {
			cells["mark"] = st.marked.Render("●")
		}
		cells["id"] = st.muted.Render(" "+branch+open) + fmt.Sprint(g.PGID)
		cells["state"] = m.stateCell(g, now)
		cells["n"] = fmt.Sprint(g.LiveMembers())
		cells["who"] = m.originCell(g.Origin)
		if t := groupStarted(g); !t.IsZero() {
			cells["age"] = formatAge(now.Sub(t))
		}
		if g.State != groupstate.Settled {
			cells["cpu"] = fmt.Sprintf("%.1f", groupCPU(g))
			cells["rss"] = formatBytes(groupRSS(g))
		}
		cells["exit"] = exitString(g.Exit)
		cells["tty"] = groupTTY(g)
		cells["tag"] = st.accent.Render(safetext.Line(g.Tag))
		if g.Stuck != "" && g.State != groupstate.Settled {
			cells["stuck"] = st.danger.Render(safetext.Line(g.Stuck))
		}
		cells["cmd"] = command(g)
		if g.State == groupstate.Settled {
			cells["cmd"] = st.muted.Render(cells["cmd"])
		}
	} else {
		p := r.proc
		pipe := "│"
		if m.lastGroupInSession(r) {
			pipe = " "
		}
		cells["mark"] = " "
		cells["id"] = st.muted.Render(" "+pipe+" ·") + fmt.Sprint(p.PID)
		cells["state"] = st.muted.Render(procStateWord(p.State))
		if r.escapee {
			cells["state"] = st.exited.Render("escapee")
		}
		if !p.Started.IsZero() {
			cells["age"] = formatAge(now.Sub(p.Started))
		}
		cells["cpu"] = fmt.Sprintf("%.1f", p.CPUPercent)
		cells["rss"] = formatBytes(p.RSSBytes)
		cells["tty"] = p.TTY
		cells["cmd"] = argvString(p.Argv, p.Comm)
	}
	var b strings.Builder
	for _, c := range cols {
		b.WriteString(padStyled(cells[c.id], c.width, c.right))
		b.WriteByte(' ')
	}
	b.WriteString(fit(cells["cmd"], cmdW))
	return b.String()
}

// lastGroupInSession says whether a process row's group is the session's
// last, so the tree line below it is not drawn.
func (m *Model) lastGroupInSession(r row) bool {
	for _, o := range m.cur.tree.rows {
		if o.kind == rowGroup && o.group == r.group {
			return o.last
		}
	}
	return false
}

func (m *Model) stateCell(g *sandbox.Group, now time.Time) string {
	st := m.st
	if td, ok := m.cur.teardowns[g.PGID]; ok {
		switch td.phase {
		case TeardownEmpty:
			return st.ok.Render(td.label(now))
		case TeardownFailed:
			return st.danger.Render(td.label(now))
		}
		return st.warning.Render(td.label(now))
	}
	s := g.State
	if g.Stuck != "" && s != groupstate.Settled && !m.stuckColumn() {
		// Where the STUCK column does not fit, the state says it.
		return st.danger.Render("⚠ " + g.Stuck)
	}
	if s == groupstate.Settled && g.Exit != nil && !m.exitColumn() {
		// Where the EXIT column does not fit, the state says how it ended.
		if g.Exit.Signal != "" {
			return st.settled.Render("killed " + exitString(g.Exit))
		}
		return st.settled.Render("exited " + exitString(g.Exit))
	}
	var sty lipgloss.Style
	switch s {
	case groupstate.Running:
		sty = st.running
	case groupstate.Stopped:
		sty = st.stopped
	case groupstate.LeaderExited:
		sty = st.exited
	default:
		sty = st.settled
	}
	return sty.Render(s.String())
}

func (m *Model) originCell(o sandbox.Origin) string {
	switch o {
	case sandbox.OriginSandtop:
		return m.st.managed.Render("sandtop")
	case sandbox.OriginAgent:
		return m.st.agent.Render("agent")
	case sandbox.OriginEnvd:
		return m.st.agent.Render("envd")
	}
	return m.st.foreign.Render("other")
}

func procStateWord(s string) string {
	switch s {
	case "R":
		return "R running"
	case "S":
		return "S sleeping"
	case "D":
		return "D disk wait"
	case "T", "t":
		return s + " stopped"
	case "Z":
		return "Z zombie"
	case "I":
		return "I idle"
	}
	return s
}

// count is n nouns: "1 member", "3 members".
func count(n int, noun string) string { return fmt.Sprintf("%d %s%s", n, noun, plural(n)) }

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pad(s string, w int, right bool) string {
	return padStyled(s, w, right)
}

// padStyled pads or cuts styled text to w cells, aligned left or right.
func padStyled(s string, w int, right bool) string {
	sw := lipgloss.Width(s)
	if sw > w {
		return fit(s, w)
	}
	if right {
		return strings.Repeat(" ", w-sw) + s
	}
	return s + strings.Repeat(" ", w-sw)
}
