package ui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	tea "charm.land/bubbletea/v2"
)

// confirmDialog asks before a destructive action. "No" is preselected, so
// a stray Enter cancels; y confirms directly.
type confirmDialog struct {
	title  string
	body   []string
	verb   string
	danger bool
	yes    bool
	action func(m *Model) tea.Cmd
}

func newConfirm(title string, body []string, verb string, danger bool, action func(m *Model) tea.Cmd) *confirmDialog {
	return &confirmDialog{title: title, body: body, verb: verb, danger: danger, action: action}
}

func (d *confirmDialog) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch msg.String() {
	case "y", "Y":
		return true, d.action(m)
	case "n", "N":
		m.setStatus(levelInfo, "cancelled")
		return true, nil
	}
	switch m.dialogAction(msg, false) {
	case actCancel:
		m.setStatus(levelInfo, "cancelled")
		return true, nil
	case actSwitch, actUp, actDown:
		d.yes = !d.yes
	case actOK:
		if d.yes {
			return true, d.action(m)
		}
		m.setStatus(levelInfo, "cancelled")
		return true, nil
	}
	return false, nil
}

func (d *confirmDialog) view(m *Model, w, h int) string {
	st := m.st
	lines := append([]string{}, d.body...)
	lines = append(lines, "")
	no, yes := st.button.Render("[ No ]"), st.button.Render("[ Yes, "+d.verb+" ]")
	if d.yes {
		yes = st.buttonActive.Render("[ Yes, " + d.verb + " ]")
	} else {
		no = st.buttonActive.Render("[ No ]")
	}
	lines = append(lines, no+"   "+yes)
	lines = append(lines, st.muted.Render("y confirm · n/"+m.keyOf(m.keys.Back)+" cancel · "+m.keyOf(m.keys.Collapse)+" "+m.keyOf(m.keys.Expand)+" choose"))
	title := st.dialogTitle.Render(d.title)
	if d.danger {
		title = st.danger.Render(d.title)
	}
	return dialogBox(st, title, lines, w, 0)
}

// dialogBox frames dialog lines, as wide as they need up to the screen.
func dialogBox(st styles, title string, lines []string, screenW, minW int) string {
	w := max(minW, 30)
	for _, l := range lines {
		w = max(w, visibleWidth(l)+4)
	}
	w = max(w, visibleWidth(title)+6)
	w = min(w, screenW-4)
	padded := make([]string, 0, len(lines)+2)
	padded = append(padded, "")
	for _, l := range lines {
		padded = append(padded, " "+l)
	}
	padded = append(padded, "")
	return box(st, title, padded, w, len(padded)+2, true)
}

func visibleWidth(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		n = max(n, ansi.StringWidth(l))
	}
	return n
}
