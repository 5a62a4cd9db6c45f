package ui

import (
	"fmt"
	"io"
	"os"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// exportDoneMsg reports a copy or a save of a group's output.
type exportDoneMsg struct {
	what string // "copied 12 lines", "saved 340 lines to out.log"
	err  error
}

// copyOutput puts the visible lines of the output pane on the clipboard
// with OSC 52, which the terminal (and tmux, and ssh in between) carries to
// the operator's own clipboard.
func (m *Model) copyOutput() tea.Cmd {
	lines := m.detail.out.visible()
	if len(lines) == 0 {
		m.setStatus(levelInfo, "nothing to copy")
		return nil
	}
	text := strings.Join(lines, "\n") + "\n"
	w := m.opts.Clipboard
	if w == nil {
		w = os.Stdout
	}
	n := len(lines)
	return func() tea.Msg {
		_, err := io.WriteString(w, ansi.SetSystemClipboard(text))
		return exportDoneMsg{what: fmt.Sprintf("copied %d line%s (OSC 52)", n, plural(n)), err: err}
	}
}

func (m *Model) defaultSaveName() string {
	return fmt.Sprintf("sandtop-pgid%d-%s.log", m.detail.pgid, m.now().Format("20060102-150405"))
}

// saveOutput writes every line held (not only the visible ones) to path on
// this machine, without colours.
func (m *Model) saveOutput(path string) tea.Cmd {
	if path == "" {
		return nil
	}
	text := m.detail.out.plainText()
	n := m.detail.out.count()
	return func() tea.Msg {
		err := os.WriteFile(path, []byte(text), 0o600)
		return exportDoneMsg{what: fmt.Sprintf("saved %d line%s to %s", n, plural(n), path), err: err}
	}
}

func (m *Model) onExportDone(msg exportDoneMsg) {
	if msg.err != nil {
		m.setStatus(levelError, msg.err.Error())
		m.cur.events.add(m.now(), levelError, "%v", msg.err)
		return
	}
	m.setStatus(levelOK, msg.what)
	m.cur.events.add(m.now(), levelOK, "%s", msg.what)
}
