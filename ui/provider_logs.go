package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/safetext"
)

// The sandbox's own log, as its provider collects it: a dialog over the
// screen, newest lines at the bottom, r reloads.

// planeLogLimit is how many of the newest lines the view asks for.
const planeLogLimit = 500

type providerLogsMsg struct {
	lines []ProviderLogLine
	err   error
}

type providerLogsDialog struct {
	lines   []ProviderLogLine
	err     error
	loading bool
	back    int // lines scrolled up from the newest
}

// openProviderLogs shows the log of the sandbox on screen.
func (m *Model) openProviderLogs() tea.Cmd {
	sb := m.cur
	if sb.spec.Provider == nil {
		m.setStatus(levelInfo, sb.targetName()+" has no provider log (only E2B sandboxes do)")
		return nil
	}
	d := &providerLogsDialog{}
	m.openDialog(sb, d)
	return d.load(m, sb)
}

// load asks sb's provider for its log; the answer comes back to sb.
func (d *providerLogsDialog) load(m *Model, sb *sandboxState) tea.Cmd {
	d.loading = true
	plane, ctx := sb.spec.Provider, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		lines, err := plane.Logs(c, planeLogLimit)
		return scopedMsg{sb, providerLogsMsg{lines: lines, err: err}}
	}
}

func (d *providerLogsDialog) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch msg.String() {
	case "esc", "q", "L":
		return true, nil
	case "r":
		return false, d.load(m, m.dialogSB)
	case "up", "k":
		d.back = min(d.back+1, max(len(d.lines)-1, 0))
	case "down", "j":
		d.back = max(d.back-1, 0)
	case "pgup":
		d.back = min(d.back+10, max(len(d.lines)-1, 0))
	case "pgdown":
		d.back = max(d.back-10, 0)
	case "G", "end":
		d.back = 0
	}
	return false, nil
}

func (d *providerLogsDialog) view(m *Model, w, h int) string {
	st := m.st
	rows := max(h-10, 3)
	var lines []string
	switch {
	case d.loading && len(d.lines) == 0:
		lines = append(lines, st.muted.Render("loading…"))
	case d.err != nil:
		lines = append(lines, st.danger.Render("cannot read the log: "+safetext.Line(d.err.Error())))
	case len(d.lines) == 0:
		lines = append(lines, st.muted.Render("no log lines"))
	}
	end := len(d.lines) - d.back
	for _, l := range d.lines[max(0, end-rows):max(end, 0)] {
		text := fmt.Sprintf("%s %-5s %s", l.At.Local().Format(time.TimeOnly), l.Level, strings.Join(strings.Fields(l.Message), " "))
		if l.Level == "error" || l.Level == "warn" {
			text = st.warning.Render(fit(text, w-10))
		} else {
			text = fit(text, w-10)
		}
		lines = append(lines, text)
	}
	lines = append(lines, "", st.muted.Render(fmt.Sprintf("%d lines · ↑/↓ scroll · r reload · esc close", len(d.lines))))
	return dialogBox(st, st.dialogTitle.Render("Sandbox log: "+m.cur.targetName()), lines, w, w-8)
}
