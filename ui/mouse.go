package ui

import tea "charm.land/bubbletea/v2"

// handleMouse supports the wheel and clicks when Options.Mouse is on.
func (m *Model) handleMouse(ev tea.MouseMsg) tea.Cmd {
	if m.dialog != nil || m.focus == focusAttached {
		return nil
	}
	sb := m.cur
	msg := ev.Mouse()
	in := func(r rect) bool { return msg.X >= r.x && msg.X < r.x+r.w && msg.Y >= r.y && msg.Y < r.y+r.h }
	_, press := ev.(tea.MouseClickMsg)
	left := press && msg.Button == tea.MouseLeft
	wheel := 0
	if _, ok := ev.(tea.MouseWheelMsg); ok {
		switch msg.Button {
		case tea.MouseWheelUp:
			wheel = -3
		case tea.MouseWheelDown:
			wheel = 3
		}
	}
	switch {
	case in(m.lay.detail) && m.detail.kind == detailGroup:
		if wheel != 0 {
			m.detail.out.scroll(wheel)
		}
		if left {
			m.focus = focusOutput
		}
	case in(m.lay.tree):
		if wheel != 0 {
			m.pane = paneTree
			return m.moveCursor(wheel)
		}
		if left {
			row := sb.tree.offset + msg.Y - m.lay.tree.y - 2 // border and column header
			if row >= 0 && row < len(sb.tree.rows) {
				m.focus, m.pane = focusList, paneTree
				sb.tree.setCursor(row)
				return m.syncDetail()
			}
		}
	case in(m.lay.terms):
		if wheel != 0 {
			m.pane = paneTerms
			return m.moveCursor(wheel / 3)
		}
		if left {
			row := msg.Y - m.lay.terms.y - 2
			if row >= 0 && row < len(sb.terms) {
				m.focus, m.pane, sb.termCursor = focusList, paneTerms, row
				return m.syncDetail()
			}
		}
	}
	return nil
}
