package ui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// dialog is a modal that owns the keys while open: confirmations, the
// signal menu, the bulk teardown, the palette, help and prompts.
type dialog interface {
	// key handles one key; done closes the dialog. What it does to a
	// sandbox it does to m.dialogSB, the one it was opened for.
	key(m *Model, msg tea.KeyPressMsg) (done bool, cmd tea.Cmd)
	// view draws the dialog box for a screen of w×h cells.
	view(m *Model, w, h int) string
}

// inlineDialog is a dialog drawn in the footer instead of over the screen.
type inlineDialog interface {
	dialog
	inline()
}

// openDialog shows d bound to sb: its keys, and the action it confirms,
// act on sb even if the operator switches.
func (m *Model) openDialog(sb *sandboxState, d dialog) {
	if m.dialog == nil {
		m.returnTo = m.focus
	}
	m.dialog, m.dialogSB = d, sb
	m.focus = focusDialog
}

func (m *Model) closeDialog() {
	m.dialog, m.dialogSB = nil, nil
	if m.focus == focusDialog {
		m.focus = m.returnTo
	}
}

func (m *Model) dialogKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.dialog
	done, cmd := d.key(m, msg)
	// An action may have opened a follow-up dialog (menu → confirm); only
	// close the one that finished.
	if done && m.dialog == d {
		m.closeDialog()
	}
	return cmd
}

// keyOf is the first key of a binding as the help names it ("esc",
// "enter", "↑/k"), for the hints under a dialog, so they name the keys the
// operator configured.
func (m *Model) keyOf(b key.Binding) string { return b.Help().Key }

// dialogAct is what a key means inside a dialog. It comes from the keymap,
// so a binding changed in [keys] changes it in every dialog too.
type dialogAct int

const (
	actNone dialogAct = iota
	actUp
	actDown
	actOK
	actCancel
	actSwitch // between the buttons of a confirmation
)

// dialogAction maps a key to a dialog action. In a dialog with a text
// field (text), printable keys are typing, never actions.
func (m *Model) dialogAction(msg tea.KeyPressMsg, text bool) dialogAct {
	if text && isText(msg) {
		return actNone
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Back), key.Matches(msg, k.Quit):
		return actCancel
	case key.Matches(msg, k.Open):
		return actOK
	case key.Matches(msg, k.Up):
		return actUp
	case key.Matches(msg, k.Down):
		return actDown
	case key.Matches(msg, k.Collapse), key.Matches(msg, k.Expand), key.Matches(msg, k.NextPane), key.Matches(msg, k.PrevPane):
		return actSwitch
	}
	return actNone
}

// textDialog is a dialog with a text field, which takes pastes.
type textDialog interface {
	dialog
	takesText()
}

func (p *prompt) takesText()     {}
func (p *palette) takesText()    {}
func (d *bulkDialog) takesText() {}

// dialogPaste types a paste into the dialog's text field; a dialog without
// one ignores it, so pasted text never answers a confirmation.
func (m *Model) dialogPaste(msg tea.PasteMsg) tea.Cmd {
	if _, ok := m.dialog.(textDialog); !ok || msg.Content == "" {
		return nil
	}
	r := []rune(msg.Content)
	return m.dialogKey(tea.KeyPressMsg{Code: r[0], Text: msg.Content})
}
