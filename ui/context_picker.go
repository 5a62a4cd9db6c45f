package ui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

// contextPicker lists every sandbox with its state, k9s's ":ctx" view:
// unreachable ones say why instead of failing the whole TUI.
type contextPicker struct{ cursor int }

func (m *Model) openContextPicker() {
	m.openDialog(m.cur, &contextPicker{cursor: m.cur.index})
}

func (d *contextPicker) key(m *Model, msg tea.KeyMsg) (bool, tea.Cmd) {
	if key.Matches(msg, m.keys.Contexts) {
		return true, nil
	}
	// Act on the sandbox under the cursor, without switching to it.
	if key.Matches(msg, m.keys.Resume) {
		return true, m.askPlane(m.ctxs[d.cursor], "resume", 0)
	}
	if key.Matches(msg, m.keys.Extend) {
		return true, m.askPlane(m.ctxs[d.cursor], "extend", 0)
	}
	switch s := msg.String(); m.dialogAction(msg, false) {
	case actCancel:
		return true, nil
	case actUp:
		d.cursor = (d.cursor - 1 + len(m.ctxs)) % len(m.ctxs)
	case actDown:
		d.cursor = (d.cursor + 1) % len(m.ctxs)
	case actOK:
		return true, m.switchTo(d.cursor)
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < len(m.ctxs) {
			d.cursor = int(s[0] - '1')
		}
	}
	return false, nil
}

func (d *contextPicker) view(m *Model, w, h int) string {
	st := m.st
	nameW, targetW := 10, 10
	for _, sb := range m.ctxs {
		nameW = max(nameW, len(sb.spec.Name))
		targetW = max(targetW, len(sb.spec.Target))
	}
	nameW, targetW = min(nameW, 28), min(targetW, 36)
	head := fmt.Sprintf("   %-*s %-6s %-*s %6s %5s %4s  %s", nameW, "NAME", "KIND", targetW, "TARGET", "GROUPS", "MARKS", "TD", "STATE")
	lines := []string{st.muted.Render(head)}
	for i, sb := range m.ctxs {
		cur := " "
		if sb == m.cur {
			cur = "*"
		}
		groups, marks, tds := "-", "-", "-"
		if sb.watched {
			groups = fmt.Sprint(sb.liveGroups())
			marks = fmt.Sprint(len(sb.marks))
			tds = fmt.Sprint(sb.activeTeardowns())
		}
		state := sb.stateText()
		if sb.spec.ReadOnly || m.opts.ReadOnly {
			state += " · read-only"
		}
		l := fmt.Sprintf(" %s %-*s %-6s %-*s %6s %5s %4s  %s", cur,
			nameW, fit(sb.spec.Name, nameW), fit(sb.spec.Kind, 6), targetW, fit(sb.spec.Target, targetW), groups, marks, tds, state)
		if visibleWidth(l) > w-10 {
			l = fit(l, max(40, w-10))
		}
		switch {
		case i == d.cursor:
			l = st.selected.Render("▸" + l[1:])
		case sb.spec.Plane != nil && sb.pl.info.Paused():
			l = st.warning.Render(l)
		case sb.state == openFailed:
			l = st.danger.Render(l)
		}
		lines = append(lines, l)
		if sb.spec.Plane != nil {
			lines = append(lines, m.planePickerLine(sb, w))
		}
	}
	lines = append(lines, "", st.muted.Render(m.keyOf(m.keys.Open)+" switch · "+m.keyOf(m.keys.Up)+" "+m.keyOf(m.keys.Down)+" move · 1-9 pick · "+m.keyOf(m.keys.Back)+" close · marks and actions stay in their sandbox"))
	if m.hasPlanes() {
		lines = append(lines, st.muted.Render(m.keyOf(m.keys.Resume)+" resume · "+m.keyOf(m.keys.Extend)+" extend the E2B sandbox under the cursor (asks first)"))
	}
	return dialogBox(st, st.dialogTitle.Render("Sandboxes"), lines, w, 60)
}

// planePickerLine is a provider sandbox's second picker line: template
// (alias), state, time left, metrics and metadata.
func (m *Model) planePickerLine(sb *sandbox, w int) string {
	st, p := m.st, &sb.pl
	left := FormatTimeLeft(p.info.EndAt.Sub(m.now())) + " left"
	state := p.info.State
	switch {
	case p.gone:
		state, left = "gone", "-"
	case p.info.Paused():
		left = p.info.endText()
	}
	parts := []string{p.info.templateName(), state, left}
	if p.hasMetrics && !p.info.Paused() {
		parts = append(parts, formatMetrics(p.metrics))
	}
	parts = append(parts, FormatMetadata(p.info.Metadata))
	l := "     " + strings.Join(parts, " · ")
	if visibleWidth(l) > w-10 {
		l = fit(l, max(40, w-10))
	}
	if !p.gone && !p.info.Paused() && p.info.EndAt.Sub(m.now()) < timeLeftWarning {
		return st.warning.Render(l)
	}
	return st.muted.Render(l)
}
