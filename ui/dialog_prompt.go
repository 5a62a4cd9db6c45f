package ui

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
)

type promptKind int

const (
	promptFilter promptKind = iota // filters the tree as you type
	promptSearch                   // searches a group's output on enter
	promptSave                     // saves a group's output to a file on enter
)

// prompt is a one-line input in the footer.
type prompt struct {
	kind  promptKind
	label string
	old   string
	input textinput.Model
}

func newPrompt(kind promptKind, label, value string) *prompt {
	return &prompt{kind: kind, label: label, old: value, input: newInput(promptSymbol(kind), value)}
}

func promptSymbol(k promptKind) string {
	if k == promptSave {
		return ""
	}
	return "/"
}

func (p *prompt) inline() {}

func (p *prompt) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch m.dialogAction(msg, true) {
	case actCancel:
		if p.kind == promptFilter {
			return true, p.setFilter(m, "")
		}
		return true, nil
	case actOK:
		if p.kind == promptSave {
			return true, m.saveOutput(p.input.Value())
		}
		if p.kind == promptSearch {
			m.detail.out.search(p.input.Value())
			if p.input.Value() != "" && len(m.detail.out.matches) == 0 {
				m.setStatus(levelInfo, "no matches for "+p.input.Value())
			}
		}
		return true, nil
	}
	p.input, _ = p.input.Update(msg)
	if p.kind == promptFilter && m.dialogSB.tree.filter != p.input.Value() {
		return false, p.setFilter(m, p.input.Value())
	}
	return false, nil
}

// setFilter filters the groups of the prompt's sandbox; the detail pane
// follows the selection if that sandbox is the one on screen.
func (p *prompt) setFilter(m *Model, text string) tea.Cmd {
	sb := m.dialogSB
	sb.tree.filter = text
	sb.tree.rebuild()
	if sb != m.cur {
		return nil
	}
	return m.syncDetail()
}

func (p *prompt) view(m *Model, w, h int) string {
	hint := "  " + m.keyOf(m.keys.Open) + " keep · " + m.keyOf(m.keys.Back) + " clear"
	if p.kind == promptFilter {
		hint += " · " + filterHelp
	}
	if p.kind == promptSave {
		hint = "  " + m.keyOf(m.keys.Open) + " save · " + m.keyOf(m.keys.Back) + " cancel"
	}
	return fit(m.st.accent.Render(p.label+" ")+p.input.View()+m.st.muted.Render(hint), w)
}
