package ui

import (
	tea "github.com/charmbracelet/bubbletea"
)

// dialog is a modal that owns the keys while open: confirmations, the
// signal menu, the bulk teardown, the palette, help and prompts.
type dialog interface {
	// key handles one key; done closes the dialog.
	key(m *Model, msg tea.KeyMsg) (done bool, cmd tea.Cmd)
	// view draws the dialog box for a screen of w×h cells.
	view(m *Model, w, h int) string
}

// inlineDialog is a dialog drawn in the footer instead of over the screen.
type inlineDialog interface {
	dialog
	inline()
}

// openDialog shows d bound to the context in scope: its keys, and the
// action it confirms, act on that context even if the operator switches.
func (m *Model) openDialog(d dialog) {
	if m.dialog == nil {
		m.returnTo = m.focus
	}
	m.dialog, m.dialogSB = d, m.sandbox
	m.focus = focusDialog
}

func (m *Model) closeDialog() {
	m.dialog, m.dialogSB = nil, nil
	if m.focus == focusDialog {
		m.focus = m.returnTo
	}
}

func (m *Model) dialogKey(msg tea.KeyMsg) tea.Cmd {
	d := m.dialog
	return m.within(m.dialogSB, func() tea.Cmd {
		done, cmd := d.key(m, msg)
		// An action may have opened a follow-up dialog (menu → confirm);
		// only close the one that finished.
		if done && m.dialog == d {
			m.closeDialog()
		}
		return cmd
	})
}
