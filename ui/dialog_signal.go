package ui

import (
	"fmt"
	"syscall"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/sys/unix"
)

type signalChoice struct {
	sig     syscall.Signal
	name    string
	desc    string
	confirm bool // harmless signals go straight out
}

// menuSignals are the signals the menu offers; SIGTERM comes first and is
// preselected.
var menuSignals = []signalChoice{
	{syscall.SIGTERM, "SIGTERM", "ask it to terminate", true},
	{syscall.SIGINT, "SIGINT", "interrupt, like Ctrl-C", true},
	{syscall.SIGHUP, "SIGHUP", "hang up / reload", true},
	{syscall.SIGQUIT, "SIGQUIT", "quit and dump core", true},
	{syscall.SIGKILL, "SIGKILL", "kill; cannot be caught", true},
	{syscall.SIGSTOP, "SIGSTOP", "pause", true},
	{syscall.SIGCONT, "SIGCONT", "resume after a pause", false},
	{syscall.SIGTSTP, "SIGTSTP", "terminal stop, like Ctrl-Z", true},
	{syscall.SIGUSR1, "SIGUSR1", "user signal 1", true},
	{syscall.SIGUSR2, "SIGUSR2", "user signal 2", true},
	{syscall.SIGWINCH, "SIGWINCH", "window size changed", false},
}

// signalName is "SIGTERM", from the platform's table, or "signal 40".
func signalName(sig syscall.Signal) string {
	if n := unix.SignalName(sig); n != "" {
		return n
	}
	return fmt.Sprintf("signal %d", int(sig))
}

// signalMenu picks a signal for a group or a terminal's foreground group.
type signalMenu struct {
	target signalTarget
	cursor int
}

func newSignalMenu(t signalTarget) *signalMenu { return &signalMenu{target: t} }

func (d *signalMenu) key(m *Model, msg tea.KeyPressMsg) (bool, tea.Cmd) {
	switch s := msg.String(); m.dialogAction(msg, false) {
	case actCancel:
		return true, nil
	case actUp:
		d.cursor = (d.cursor - 1 + len(menuSignals)) % len(menuSignals)
	case actDown:
		d.cursor = (d.cursor + 1) % len(menuSignals)
	case actOK:
		return true, m.chooseSignal(m.dialogSB, d.target, menuSignals[d.cursor])
	default:
		if len(s) == 1 && s[0] >= '1' && s[0] <= '9' && int(s[0]-'1') < len(menuSignals) {
			d.cursor = int(s[0] - '1')
		}
	}
	return false, nil
}

func (d *signalMenu) view(m *Model, w, h int) string {
	st := m.st
	lines := []string{"to " + d.target.label, ""}
	for i, c := range menuSignals {
		l := fmt.Sprintf(" %d  %-9s %s", i+1, c.name, c.desc)
		if i >= 9 {
			l = fmt.Sprintf("    %-9s %s", c.name, c.desc)
		}
		if i == d.cursor {
			l = st.selected.Render(fit("▸"+l[1:], 40))
		}
		lines = append(lines, l)
	}
	lines = append(lines, "", st.muted.Render(m.keyOf(m.keys.Open)+" choose · "+m.keyOf(m.keys.Up)+" "+m.keyOf(m.keys.Down)+" move · "+m.keyOf(m.keys.Back)+" cancel"))
	return dialogBox(st, st.dialogTitle.Render("Send signal"), lines, w, 46)
}

// chooseSignal confirms the signal unless it is harmless, then sends it
// to t in sb.
func (m *Model) chooseSignal(sb *sandboxState, t signalTarget, c signalChoice) tea.Cmd {
	// SIGKILL asks even when the config turned signal confirmation off.
	if !c.confirm || (m.opts.NoConfirm.Signal && c.sig != syscall.SIGKILL) {
		return m.sendSignal(sb, t, c.sig)
	}
	body := m.inContext(sb, []string{"to " + t.label})
	if c.sig == syscall.SIGKILL {
		body = append(body, "", "SIGKILL cannot be caught: the processes get no chance to clean up.")
	}
	m.openDialog(sb, newConfirm("Send "+c.name+"?", body, "send "+c.name, true, func(m *Model) tea.Cmd {
		return m.sendSignal(sb, t, c.sig)
	}))
	return nil
}

func (m *Model) sendSignal(sb *sandboxState, t signalTarget, sig syscall.Signal) tea.Cmd {
	if m.readOnly(sb) {
		m.refuse(sb, "signal")
		return nil
	}
	if t.termPid != 0 {
		return m.signalForegroundCmd(sb, t.termPid, sig)
	}
	return m.signalCmd(sb, t.pgid, sig)
}

func (m *Model) onSignalDone(sb *sandboxState, msg signalDoneMsg) {
	name := signalName(msg.sig)
	where := fmt.Sprintf("pgid %d", msg.pgid)
	if msg.termPid != 0 {
		where = fmt.Sprintf("foreground pgid %d of terminal %d", msg.pgid, msg.termPid)
	}
	if msg.err != nil {
		sb.events.add(m.now(), levelError, "%s to %s failed: %v", name, where, msg.err)
		m.setStatus(levelError, fmt.Sprintf("%s failed: %v", name, msg.err))
		return
	}
	sb.events.add(m.now(), levelOK, "%s sent to %s", name, where)
}
