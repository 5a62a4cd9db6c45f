package ui

import (
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// helpDialog lists every binding of the keymap, so help can never drift
// from what the keys do.
type helpDialog struct {
	keys   KeyMap
	offset int // first line shown, when the screen is too short for all
}

func newHelpDialog(k KeyMap) *helpDialog { return &helpDialog{keys: k} }

func (d *helpDialog) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if key.Matches(msg, m.keys.Help) {
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

func (d *helpDialog) view(m *Model, w, h int) string {
	st := m.st
	var cols [][]string
	for _, sec := range d.keys.helpSections() {
		col := []string{st.accent.Render(sec.title)}
		for _, b := range sec.bindings {
			col = append(col, fmt.Sprintf("%s %s", st.keyHint.Render(fit(b.Help().Key, 10)), b.Help().Desc))
		}
		cols = append(cols, col)
	}
	// Two columns of sections side by side.
	var lines []string
	for i := 0; i < len(cols); i += 2 {
		left, right := cols[i], []string(nil)
		if i+1 < len(cols) {
			right = cols[i+1]
		}
		for j := 0; j < max(len(left), len(right)); j++ {
			l, r := "", ""
			if j < len(left) {
				l = left[j]
			}
			if j < len(right) {
				r = right[j]
			}
			lines = append(lines, fit(l, 42)+"  "+r) // a gap even when l is cut
		}
		lines = append(lines, "")
	}
	lines = append(lines,
		"While attached every key goes to the remote program, Ctrl-C included;",
		"only "+st.keyHint.Render(d.keys.Detach.Help().Key)+" comes back here. Quitting never signals anything remote.")
	if m.readOnly(m.cur) {
		lines = append(lines, st.warning.Render("Read-only: spawning, signals, teardown and input are refused."))
	}
	// A short screen shows a window of the lines, scrolled with up/down.
	if room := h - 4; room > 2 && len(lines)+2 > room {
		d.offset = min(d.offset, len(lines)-(room-1))
		lines = append(lines[d.offset:d.offset+room-1:d.offset+room-1], st.muted.Render(fmt.Sprintf("%s %s scroll (%d/%d) · %s close",
			d.keys.Up.Help().Key, d.keys.Down.Help().Key, d.offset+room-1, len(lines), d.keys.Back.Help().Key)))
		return dialogBox(st, st.dialogTitle.Render("Keys"), lines, w, 90)
	}
	lines = append(lines, "", st.muted.Render(d.keys.Back.Help().Key+" close"))
	return dialogBox(st, st.dialogTitle.Render("Keys"), lines, w, 90)
}
