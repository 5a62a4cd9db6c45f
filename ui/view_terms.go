package ui

import (
	"fmt"

	"github.com/charmbracelet/x/ansi"

	"sandtop/safetext"
)

func (m *Model) viewTerminals() string {
	sb := m.cur
	r := m.lay.terms
	w, h := r.inner()
	st := m.st
	focused := m.focus == focusList && m.pane == paneTerms
	header := " " + fmt.Sprintf("%-6s %-7s %-7s %-8s %-8s %s", "PID", "SID", "FG", "INPUT", "SIZE", "TITLE")
	lines := []string{st.muted.Render(header)}
	body := h - 1
	offset := 0
	if sb.termCursor >= body {
		offset = sb.termCursor - body + 1
	}
	for i := offset; i < len(sb.terms) && len(lines) < h; i++ {
		t := sb.terms[i]
		badge := st.muted.Render(fit("-", 8))
		if t.InputWaiting {
			badge = st.warning.Render(fit("● wait", 8))
		}
		title := safetext.Line(t.Title)
		if title == "" {
			title = argvString(t.Argv, "")
		}
		marker := " "
		if m.focus == focusAttached && m.detail.pid == t.PID {
			marker = st.accent.Render(">")
		}
		line := fmt.Sprintf(" %-6d %-7d %-7d %s %-8s %s%s", t.PID, t.SID, t.ForegroundPGID, badge, fmt.Sprintf("%dx%d", t.Cols, t.Rows), marker, title)
		if i == sb.termCursor {
			line = "›" + ansiCutLeft(line, 1)
		}
		if i == sb.termCursor && (focused || m.focus == focusAttached) {
			line = st.selected.Render(fit(stripStyle(line), w))
		} else if i == sb.termCursor && m.pane == paneTerms {
			line = st.selectedDim.Render(fit(stripStyle(line), w))
		}
		lines = append(lines, line)
	}
	if len(sb.terms) == 0 {
		lines = append(lines, st.muted.Render("no terminals — press t to start one"))
	}
	return box(st, st.title.Render(fmt.Sprintf("Terminals %d", len(sb.terms))), lines, r.w, r.h, focused)
}

func (m *Model) viewEvents() string {
	r := m.lay.events
	_, h := r.inner()
	st := m.st
	var lines []string
	for _, e := range m.cur.events.tail(h) {
		text := e.text
		switch e.level {
		case levelOK:
			text = st.ok.Render(text)
		case levelWarn:
			text = st.warning.Render(text)
		case levelError:
			text = st.danger.Render(text)
		}
		stamp := e.at.Format("15:04:05")
		if m.multi() {
			stamp += " " + fit(e.tag, m.tagWidth()) // which sandbox it happened in
		}
		lines = append(lines, st.muted.Render(stamp)+" "+text)
	}
	return box(st, st.title.Render("Events"), lines, r.w, r.h, false)
}

// stripStyle removes styling, so a selected row can be restyled whole.
func stripStyle(s string) string { return ansi.Strip(s) }

// ansiCutLeft drops the first n cells of styled text.
func ansiCutLeft(s string, n int) string { return ansi.TruncateLeft(s, n, "") }

// tagWidth is the event log's sandbox column: the longest name, within
// reason.
func (m *Model) tagWidth() int {
	w := 5
	for _, sb := range m.sandboxes {
		w = max(w, len(sb.spec.Name))
	}
	return min(w, 20)
}
