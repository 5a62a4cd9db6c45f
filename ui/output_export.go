package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// exportDoneMsg reports a copy or a save of a group's output.
type exportDoneMsg struct {
	what string // "copied 12 lines", "saved 340 lines to out.log"
	err  error
}

// copyOutput sends the visible lines of the output pane to the terminal's
// clipboard with OSC 52, which a terminal (and ssh in between) carries to
// the operator's own clipboard. tmux drops OSC 52 from its panes by
// default, so inside tmux the lines also go to tmux's paste buffer, and
// from there to the outer terminal's clipboard where tmux can.
func (m *Model) copyOutput() tea.Cmd {
	lines := m.detail.out.visible()
	if len(lines) == 0 {
		m.setStatus(levelInfo, "nothing to copy")
		return nil
	}
	text := strings.Join(lines, "\n") + "\n"
	n := fmt.Sprintf("%d line%s", len(lines), plural(len(lines)))
	report := func() tea.Msg {
		return exportDoneMsg{what: "sent " + n + " to the terminal's clipboard (OSC 52; it may ignore it)"}
	}
	if m.opts.Tmux != nil {
		report = func() tea.Msg {
			if err := m.opts.Tmux(text); err != nil {
				return exportDoneMsg{what: "sent " + n + " to the terminal's clipboard (OSC 52); tmux's buffer refused them: " + err.Error()}
			}
			return exportDoneMsg{what: "copied " + n + " to tmux's buffer (prefix ]) and the terminal's clipboard (OSC 52)"}
		}
	}
	return tea.Batch(tea.SetClipboard(text), report)
}

// TmuxBuffer loads text into tmux's paste buffer, asking tmux (-w) to pass
// it on to the outer terminal's clipboard; tmux before 3.2 lacks -w, and
// then the buffer alone is set.
func TmuxBuffer(text string) error {
	load := func(args ...string) error {
		cmd := exec.Command("tmux", append([]string{"load-buffer"}, args...)...)
		cmd.Stdin = strings.NewReader(text)
		out, err := cmd.CombinedOutput()
		if err != nil && len(out) > 0 {
			return fmt.Errorf("%s", strings.TrimSpace(string(out)))
		}
		return err
	}
	if load("-w", "-") == nil {
		return nil
	}
	return load("-")
}

func (m *Model) defaultSaveName() string {
	return fmt.Sprintf("sandtop-pgid%d-%s.log", m.detail.pgid, m.now().Format("20060102-150405"))
}

// savePath is where a save named name goes: a relative name is inside the
// exports directory, never the directory sandtop was started from.
func (m *Model) savePath(name string) string {
	if strings.HasPrefix(name, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, name[2:])
		}
	}
	if filepath.IsAbs(name) {
		return name
	}
	return filepath.Join(m.opts.ExportDir, name)
}

// saveOutput writes every line held (not only the visible ones) to the
// file name names on this machine, without colours, and says where.
func (m *Model) saveOutput(name string) tea.Cmd {
	if name == "" {
		return nil
	}
	path := m.savePath(name)
	text := m.detail.out.plainText()
	n := m.detail.out.count()
	return func() tea.Msg {
		err := os.MkdirAll(filepath.Dir(path), 0o700)
		if err == nil {
			err = os.WriteFile(path, []byte(text), 0o600)
		}
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
