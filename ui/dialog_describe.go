package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"sandtop/groupstate"
	"sandtop/safetext"
	"sandtop/sandbox"
)

// describeDialog shows everything the TUI knows of one group, unclipped:
// the full command, tag, origin, state directory, start, members, how it
// ended and why it looks stuck. It reads the group afresh at every frame,
// so it follows the group while open.
type describeDialog struct {
	pgid   int
	offset int // first line shown, when the screen is too short for all
	// details are the group's state directory's facts, once read (nil
	// while they are; see GroupDescriber); detailsErr why they could not
	// be.
	details    *GroupDetails
	detailsErr error
}

// describeDetailsMsg carries a group's details to the describe view.
type describeDetailsMsg struct {
	pgid    int
	details GroupDetails
	err     error
}

// describeDetailsTimeout bounds the read of a group's details.
const describeDetailsTimeout = 5 * time.Second

// onDescribeDetails hands details to the describe view still open on them.
func (m *Model) onDescribeDetails(msg describeDetailsMsg) {
	if d, ok := m.dialog.(*describeDialog); ok && d.pgid == msg.pgid {
		d.details, d.detailsErr = &msg.details, msg.err
	}
}

// openDescribe describes the group under the cursor (or the one the
// selected terminal runs, or the one whose output is shown).
func (m *Model) openDescribe() tea.Cmd {
	sb := m.cur
	var g *sandbox.Group
	switch {
	case m.pane == paneTerms:
		if t := sb.selectedTerminal(); t != nil {
			g = m.groupByPGID(t.PID)
		}
	case m.focus == focusOutput && m.detail.pgid != 0:
		g = m.groupByPGID(m.detail.pgid)
	default:
		g = sb.tree.selectedGroup()
	}
	if g == nil {
		m.setStatus(levelInfo, "select a group to describe")
		return nil
	}
	dd := &describeDialog{pgid: g.PGID}
	m.openDialog(sb, dd)
	desc, ok := sb.src.(GroupDescriber)
	if !ok || g.StateDir == "" {
		dd.details = &GroupDetails{} // nothing more to read
		return nil
	}
	pgid, dir := g.PGID, g.StateDir
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(context.Background(), describeDetailsTimeout)
		defer cancel()
		d, err := desc.GroupDetails(ctx, dir)
		return describeDetailsMsg{pgid: pgid, details: d, err: err}
	}
}

func (d *describeDialog) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if key.Matches(msg, m.keys.Describe) {
		return true, nil
	}
	switch m.dialogAction(msg, false) {
	case actCancel, actOK:
		return true, nil
	case actUp:
		d.offset = max(0, d.offset-1)
	case actDown:
		d.offset++ // clamped in view, which knows the height
	}
	return false, nil
}

func (d *describeDialog) view(m *Model, w, h int) string {
	st := m.st
	title := st.dialogTitle.Render(fmt.Sprintf("Group %d", d.pgid))
	var g *sandbox.Group
	for i := range m.dialogSB.tree.groups {
		if m.dialogSB.tree.groups[i].PGID == d.pgid {
			g = &m.dialogSB.tree.groups[i]
		}
	}
	width := min(100, w-4) - 4 // the box's inside, less its margins
	var lines []string
	if g == nil {
		lines = []string{st.muted.Render(fmt.Sprintf("pgid %d is no longer listed: it was pruned, or its sandbox restarted.", d.pgid))}
	} else {
		lines = describeLines(m, g, d.details, m.now(), width)
		if d.detailsErr != nil {
			lines = append(lines, "", st.warning.Render("the state directory could not be read: "+safetext.Line(d.detailsErr.Error())))
		}
	}
	hint := st.muted.Render(m.keyOf(m.keys.Up) + " " + m.keyOf(m.keys.Down) + " scroll · " + m.keyOf(m.keys.Back) + " close")
	if room := h - 6; room > 2 && len(lines) > room {
		d.offset = max(0, min(d.offset, len(lines)-room))
		lines = append(lines[d.offset:d.offset+room:d.offset+room], hint)
	} else {
		d.offset = 0
		lines = append(lines, "", hint)
	}
	return dialogBox(st, title, lines, w, min(100, w-4))
}

// describeLines are the facts of g, each value wrapped to width; details
// (nil until read) add what only its state directory tells.
func describeLines(m *Model, g *sandbox.Group, details *GroupDetails, now time.Time, width int) []string {
	st := m.st
	var lines []string
	field := func(name, value string) {
		const labelW = 11
		wrapped := strings.Split(ansi.Wrap(value, max(10, width-labelW), " /"), "\n")
		for i, l := range wrapped {
			label := ""
			if i == 0 {
				label = name
			}
			lines = append(lines, st.muted.Render(pad(label, labelW-1, false))+" "+l)
		}
	}
	argv := g.Argv
	if len(argv) == 0 {
		for _, p := range g.Members {
			if p.PID == g.PGID {
				argv = p.Argv
			}
		}
	}
	cmd := argvString(argv, "")
	if cmd == "" {
		cmd = st.muted.Render("not known (no live leader, and nothing published it)")
	}
	field("command", cmd)
	field("cwd", describeCwd(g, details, st))
	field("tag", orNone(st, safetext.Line(g.Tag)))
	origin := m.originCell(g.Origin)
	if g.Supervisor != "" {
		origin += st.muted.Render(" · supervised by the " + safetext.Line(g.Supervisor))
	}
	field("origin", origin)
	if g.StateDir != "" {
		field("state dir", safetext.Line(g.StateDir))
	} else {
		field("state dir", st.muted.Render("none: nobody published this group"))
	}
	when := func(t time.Time) string {
		return fmt.Sprintf("%s (%s ago)", t.UTC().Format("2006-01-02 15:04:05 UTC"), formatAge(now.Sub(t)))
	}
	switch t := groupStarted(g); {
	case !t.IsZero():
		field("started", when(t))
	case details != nil && !details.Started.IsZero():
		field("started", when(details.Started))
	default:
		field("started", st.muted.Render("not known"))
	}
	if details != nil && !details.Ended.IsZero() && (g.Exit != nil || g.State == groupstate.Settled) {
		field("ended", when(details.Ended))
	}
	state := m.stateCell(g, now) + st.muted.Render(fmt.Sprintf(" · %s · session %d", count(g.LiveMembers(), "live member"), g.SID))
	if g.PTY {
		state += st.muted.Render(" · on a terminal")
	}
	field("state", state)
	switch {
	case g.Exit != nil && g.Exit.Signal != "":
		field("exit", fmt.Sprintf("the command was killed by signal %d (%s)", unix.SignalNum(g.Exit.Signal), exitString(g.Exit)))
	case g.Exit != nil:
		field("exit", fmt.Sprintf("the command exited with code %d", g.Exit.Code))
	case g.State == groupstate.Settled:
		field("exit", st.muted.Render("finished; its status was not published"))
	default:
		field("exit", st.muted.Render("still running"))
	}
	if g.Stuck != "" {
		field("stuck", st.danger.Render(safetext.Line(g.Stuck)))
	}
	if g.Problem != "" {
		field("problem", st.warning.Render(safetext.Line(g.Problem)))
	}
	lines = append(lines, "", st.accent.Render(fmt.Sprintf("Members (%d)", len(g.Members))))
	if len(g.Members) == 0 {
		lines = append(lines, st.muted.Render("none live"))
	}
	for _, p := range g.Members {
		age := "-"
		if !p.Started.IsZero() {
			age = formatAge(now.Sub(p.Started))
		}
		head := fmt.Sprintf("%-7d %-7d %-12s %4s %5.1f %5s ", p.PID, p.PPID, procStateWord(p.State), age, p.CPUPercent, formatBytes(p.RSSBytes))
		lines = append(lines, head+fit(argvString(p.Argv, p.Comm), max(10, width-ansi.StringWidth(head))))
	}
	return lines
}

// describeCwd is what the TUI can tell of a group's working directory:
// what its supervisor published (details), or for an agent's group the
// directory its state lives in (<cwd>/.dsh-e2b).
func describeCwd(g *sandbox.Group, details *GroupDetails, st styles) string {
	if details != nil && details.Cwd != "" {
		return safetext.Line(details.Cwd)
	}
	if dir, _, ok := strings.Cut(g.StateDir, "/.dsh-e2b/"); ok && dir != "" {
		return safetext.Line(filepath.Clean(dir))
	}
	if g.StateDir != "" && details == nil {
		return st.muted.Render("reading the state directory…")
	}
	return st.muted.Render("not published (the bash wrapper and older supervisors do not)")
}

func orNone(st styles, s string) string {
	if s == "" {
		return st.muted.Render("none")
	}
	return s
}
