package ui

import (
	"fmt"
	"strconv"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// bulkDialog previews every marked group and asks for their count to be
// typed, so tearing down many groups can never be one stray keystroke.
// With noCount (config: bulk_teardown = false) enter on the preview is
// enough; the preview itself is always shown.
type bulkDialog struct {
	targets []sandbox.Group
	grace   time.Duration
	input   textinput.Model
	where   string // the sandbox, when there are several
	noCount bool
}

func newBulkDialog(targets []sandbox.Group, grace time.Duration) *bulkDialog {
	return &bulkDialog{targets: targets, grace: grace, input: newInput("count: ", "")}
}

func (d *bulkDialog) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch m.dialogAction(msg, true) {
	case actCancel:
		m.setStatus(levelInfo, "bulk teardown cancelled")
		return true, nil
	case actOK:
		if !d.noCount && d.input.Value() != strconv.Itoa(len(d.targets)) {
			m.setStatus(levelWarn, fmt.Sprintf("type %d to confirm, or %s to cancel", len(d.targets), m.keyOf(m.keys.Back)))
			d.input.SetValue("")
			return false, nil
		}
		sb := m.dialogSB
		var cmds []tea.Cmd
		for _, t := range d.targets {
			if g := sb.liveGroup(t.PGID); g != nil {
				cmds = append(cmds, m.startTeardown(sb, g))
			}
		}
		sb.marks = map[int]bool{}
		return true, tea.Batch(cmds...)
	}
	d.input, _ = d.input.Update(msg)
	return false, nil
}

func (d *bulkDialog) view(m *Model, w, h int) string {
	st := m.st
	lines := []string{fmt.Sprintf("Tear down %d marked groups: SIGTERM, wait %s, SIGKILL.", len(d.targets), d.grace), ""}
	if d.where != "" {
		lines = append([]string{d.where}, lines...)
	}
	show := min(len(d.targets), max(3, h-14))
	for _, g := range d.targets[:show] {
		lines = append(lines, fmt.Sprintf("  pgid %-7d %-3d %s", g.PGID, g.LiveMembers(), command(&g)))
	}
	if show < len(d.targets) {
		lines = append(lines, st.muted.Render(fmt.Sprintf("  … and %d more", len(d.targets)-show)))
	}
	if d.noCount {
		lines = append(lines, "", "Press "+m.keyOf(m.keys.Open)+" to confirm.", "", st.muted.Render(m.keyOf(m.keys.Back)+" cancel"))
	} else {
		lines = append(lines, "", fmt.Sprintf("Type %s and press enter to confirm:", st.warning.Render(strconv.Itoa(len(d.targets)))), d.input.View(),
			"", st.muted.Render(m.keyOf(m.keys.Back)+" cancel"))
	}
	return dialogBox(st, st.danger.Render("Bulk teardown"), lines, w, 50)
}
