package ui

import tea "github.com/charmbracelet/bubbletea"

// handleMouse supports the wheel and clicks when Options.Mouse is on.
func (m *Model) handleMouse(msg tea.MouseMsg) tea.Cmd {
	if m.dialog != nil || m.focus == focusAttached {
		return nil
	}
	sb := m.cur
	in := func(r rect) bool { return msg.X >= r.x && msg.X < r.x+r.w && msg.Y >= r.y && msg.Y < r.y+r.h }
	wheel := 0
	switch msg.Button {
	case tea.MouseButtonWheelUp:
		wheel = -3
	case tea.MouseButtonWheelDown:
		wheel = 3
	}
	switch {
	case in(m.lay.detail) && m.detail.kind == detailGroup:
		if wheel != 0 {
			m.detail.out.scroll(wheel)
		}
		if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft {
			m.focus = focusOutput
		}
	case in(m.lay.tree):
		if wheel != 0 {
			m.pane = paneTree
			return m.moveCursor(wheel)
		}
		if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft {
			row := sb.tree.offset + msg.Y - m.lay.tree.y - 2 // border and column header
			if row >= 0 && row < len(sb.tree.rows) {
				m.focus, m.pane, sb.tree.cursor = focusList, paneTree, row
				return m.syncDetail()
			}
		}
	case in(m.lay.terms):
		if wheel != 0 {
			m.pane = paneTerms
			return m.moveCursor(wheel / 3)
		}
		if msg.Action == tea.MouseActionPress && msg.Button == tea.MouseButtonLeft {
			row := msg.Y - m.lay.terms.y - 2
			if row >= 0 && row < len(sb.terms) {
				m.focus, m.pane, sb.termCursor = focusList, paneTerms, row
				return m.syncDetail()
			}
		}
	}
	return nil
}
