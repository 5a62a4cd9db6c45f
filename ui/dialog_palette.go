package ui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"golang.org/x/sys/unix"

	"sandtop/sandbox"
)

// palette is the ":" command line with its list of commands.
type palette struct {
	input  textinput.Model
	cursor int
	primed bool // suggestions set
}

func newPalette(value string) *palette { return &palette{input: newInput(":", value)} }

// matches lists the commands whose name starts with the first typed word.
func (p *palette) matches() []*action {
	word, _, _ := strings.Cut(strings.TrimLeft(p.input.Value(), " "), " ")
	var out []*action
	for _, c := range paletteActions() {
		if strings.HasPrefix(c.cmd, word) {
			out = append(out, c)
		}
	}
	return out
}

func (p *palette) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	if !p.primed {
		p.input.ShowSuggestions = true
		p.input.SetSuggestions(m.paletteSuggestions())
		p.primed = true
	}
	if key.Matches(msg, m.keys.NextPane) {
		if s := p.input.CurrentSuggestion(); s != "" && s != p.input.Value() {
			p.input.SetValue(s)
			p.input.CursorEnd()
		} else if ms := p.matches(); len(ms) > 0 {
			p.input.SetValue(ms[min(p.cursor, len(ms)-1)].cmd + " ")
			p.input.CursorEnd()
		}
		return false, nil
	}
	switch m.dialogAction(msg, true) {
	case actCancel:
		return true, nil
	case actUp:
		p.cursor = max(0, p.cursor-1)
		return false, nil
	case actDown:
		p.cursor = min(len(p.matches())-1, p.cursor+1)
		return false, nil
	case actOK:
		return true, m.runPalette(p.input.Value(), p.matches(), p.cursor)
	}
	p.input, _ = p.input.Update(msg)
	p.cursor = 0
	return false, nil
}

// paletteSuggestions are what tab completes a typed line to: every
// command, the signals of the menu, and the sandboxes.
func (m *Model) paletteSuggestions() []string {
	var out []string
	for _, c := range paletteActions() {
		out = append(out, c.cmd)
	}
	for _, s := range menuSignals {
		out = append(out, "signal "+strings.TrimPrefix(s.name, "SIG"))
	}
	for _, sb := range m.sandboxes {
		if sb.spec.Name != "" {
			out = append(out, "ctx "+sb.spec.Name)
		}
	}
	return out
}

// runPalette executes a typed line; a bare prefix picks the highlighted
// command.
func (m *Model) runPalette(line string, matches []*action, cursor int) tea.Cmd {
	argv, err := splitArgs(line)
	if err != nil {
		m.setStatus(levelError, err.Error())
		return nil
	}
	if len(argv) == 0 {
		return nil
	}
	for _, c := range paletteActions() {
		if c.cmd == argv[0] {
			return m.perform(c, argv[1:], true)
		}
	}
	if len(argv) == 1 && len(matches) > 0 {
		return m.perform(matches[min(cursor, len(matches)-1)], nil, true)
	}
	m.setStatus(levelError, fmt.Sprintf("unknown command %q (try :help)", argv[0]))
	return nil
}

func (p *palette) view(m *Model, w, h int) string {
	st := m.st
	lines := []string{p.input.View(), ""}
	// The arguments column is as wide as the widest, over every command,
	// so it never runs into the descriptions and does not jump as you type.
	argW := 0
	for _, c := range paletteActions() {
		argW = max(argW, ansi.StringWidth(c.args))
	}
	for i, c := range p.matches() {
		l := fmt.Sprintf("%-14s %s %s", c.cmd, fit(c.args, argW), c.desc)
		if i == p.cursor {
			l = st.selected.Render(l)
		} else {
			l = st.muted.Render(l)
		}
		lines = append(lines, l)
	}
	lines = append(lines, "", st.muted.Render(m.keyOf(m.keys.Open)+" run · "+m.keyOf(m.keys.NextPane)+" complete · "+m.keyOf(m.keys.Back)+" close"))
	return dialogBox(st, st.dialogTitle.Render("Command"), lines, w, 72)
}

func (m *Model) cmdRun(argv []string) tea.Cmd {
	if len(argv) == 0 {
		m.setStatus(levelWarn, "usage: run ARGV… (e.g. run sleep 60)")
		return nil
	}
	sb := m.cur
	if !m.usable(sb) {
		return nil
	}
	sb.events.add(m.now(), levelInfo, "starting %s", argvString(argv, ""))
	return m.spawnCmd(sb, argv)
}

// The smallest detail pane a new terminal takes its size from.
const minTermCols, minTermRows = minDetailWidth, 10

// cmdTerm starts a terminal sized like the detail pane, so the program's
// first output already fits the pane it will be shown in; or 80x24 when
// the pane is tiny.
func (m *Model) cmdTerm(argv []string) tea.Cmd {
	sb := m.cur
	if !m.usable(sb) {
		return nil
	}
	if len(argv) == 0 {
		argv = m.opts.Shell
	}
	cols, rows := m.detailInner()
	if cols < minTermCols || rows < minTermRows {
		// A pane this small would make a shell no one can use; attaching
		// zooms the pane to the screen anyway.
		cols, rows = 80, 24
	}
	sb.events.add(m.now(), levelInfo, "starting terminal %s at %dx%d", argvString(argv, ""), cols, rows)
	return m.spawnTerminalCmd(sb, argv, rows, cols)
}

func (m *Model) cmdSignal(argv []string) tea.Cmd {
	t, ok := m.currentSignalTarget()
	if !ok {
		m.setStatus(levelInfo, "select a live group or a terminal to signal")
		return nil
	}
	if len(argv) == 0 {
		m.openDialog(m.cur, newSignalMenu(t))
		return nil
	}
	name := strings.ToUpper(argv[0])
	if !strings.HasPrefix(name, "SIG") {
		name = "SIG" + name
	}
	for _, c := range menuSignals {
		if c.name == name {
			return m.chooseSignal(m.cur, t, c)
		}
	}
	// Any other signal the platform names; it asks first, as the menu
	// does for everything but the harmless ones.
	if sig := unix.SignalNum(name); sig != 0 {
		return m.chooseSignal(m.cur, t, signalChoice{sig: sig, name: name, confirm: true})
	}
	m.setStatus(levelError, "unknown signal "+argv[0])
	return nil
}

func (m *Model) cmdFilter(argv []string) tea.Cmd {
	m.cur.tree.filter = strings.Join(argv, " ")
	m.cur.tree.rebuild()
	return m.syncDetail()
}

// onSpawned logs the result of a start in sb; a new terminal is attached
// at once if sb is still on screen.
func (m *Model) onSpawned(sb *sandboxState, msg spawnedMsg) tea.Cmd {
	what := "process"
	if msg.terminal {
		what = "terminal"
	}
	if msg.err != nil {
		sb.events.add(m.now(), levelError, "start of %s %s failed: %v", what, argvString(msg.argv, ""), msg.err)
		m.setStatus(levelError, fmt.Sprintf("start failed: %v", msg.err))
		return nil
	}
	sb.events.add(m.now(), levelOK, "started %s %s as pid %d", what, argvString(msg.argv, ""), msg.pid)
	if !msg.terminal || sb != m.cur {
		return nil // a terminal started in a sandbox left since is attached from there
	}
	// Show it in the terminals list right away; the next snapshot fills in
	// the details.
	if sb.terminalByPID(msg.pid) == nil {
		m.setTerminals(sb, append(append([]sandbox.Terminal(nil), sb.terms...), sandbox.Terminal{PID: msg.pid, SID: msg.pid, ForegroundPGID: msg.pid, Rows: msg.rows, Cols: msg.cols, Argv: msg.argv, Started: m.now()}))
	}
	for i, t := range sb.terms {
		if t.PID == msg.pid {
			sb.termCursor = i
		}
	}
	if m.dialog != nil {
		return nil // the operator is busy with a dialog; don't take the keys
	}
	m.focus, m.pane = focusList, paneTerms
	m.attachReq = msg.pid
	return m.syncDetail()
}
