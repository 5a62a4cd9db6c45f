package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
)

// Switching between sandboxes, and keeping each sandbox's work in its own
// lane.
//
// Every sandbox's Source is opened in the background at startup. The
// process table of a sandbox is watched from the first time it is shown
// and stays watched afterwards (one stream per visited sandbox), so a
// teardown started in A keeps reporting, under A, after a switch to B.
// Marks, the selection and the filter stay with their context.
//
// Code that acts on one sandbox takes it as a parameter: a Source's
// results name the sandbox they came from (scopedMsg), and a dialog acts
// on the sandbox it was opened for (dialogSB), so both act on the sandbox
// they belong to even after the operator switched. Keys and views act on
// the sandbox on screen, m.cur. Only for m.cur may a result move the
// focus, the selection's stream or the layout.

// multi says whether there is more than one sandbox to tell apart.
func (m *Model) multi() bool { return len(m.sandboxes) > 1 }

// onOpened records the result of sb's Open.
func (m *Model) onOpened(sb *sandboxState, msg openedMsg) tea.Cmd {
	if msg.err != nil {
		sb.state, sb.openErr = openFailed, msg.err
		if sb.providerPaused() {
			sb.events.add(m.now(), levelWarn, "%s is paused: not dialled, so it stays paused (%s resumes it)", sb.targetName(), m.keys.Resume.Help().Key)
			return nil
		}
		sb.events.add(m.now(), levelError, "cannot reach %s: %v", sb.targetName(), msg.err)
		return nil
	}
	sb.state, sb.src, sb.openErr = openReady, msg.src, nil
	if sb == m.cur && !sb.watched {
		return m.startWatching(sb)
	}
	return nil
}

// startWatching starts the header query and the process table watch of
// sb, once.
func (m *Model) startWatching(sb *sandboxState) tea.Cmd {
	if sb.watched || sb.src == nil {
		return nil
	}
	sb.watched = true
	sb.events.add(m.now(), levelInfo, "connecting to %s", sb.targetName())
	return tea.Batch(m.infoCmd(sb), m.watchCmd(sb, sb.watchGen))
}

// usable says whether sb can take an action, and says why not in the
// footer otherwise.
func (m *Model) usable(sb *sandboxState) bool {
	if sb.state == openReady {
		return true
	}
	if sb.state == openFailed {
		m.setStatus(levelError, fmt.Sprintf("%s is unreachable: %v (c picks another sandbox)", sb.targetName(), errText(sb.openErr)))
	} else {
		m.setStatus(levelWarn, sb.targetName()+" is still connecting")
	}
	return false
}

// switchTo shows sandbox i. The detail stream of the old sandbox is closed
// (it only feeds the screen); everything else of the old sandbox stays as
// it was, teardowns included.
func (m *Model) switchTo(i int) tea.Cmd {
	if i < 0 || i >= len(m.sandboxes) {
		return nil
	}
	next := m.sandboxes[i]
	if next == m.cur {
		if next.state == openPending && !next.providerPaused() {
			// Shown for the first time, after the fleet view.
			next.state = openRunning
			next.events.add(m.now(), levelInfo, "opening %s", next.targetName())
			return m.openCmd(next)
		}
		return nil
	}
	if m.focus == focusAttached {
		m.detail.term.replies.set(nil)
	}
	cmds := []tea.Cmd{m.detail.detach()}
	m.detailGen++
	m.attachReq = 0
	m.cur = next
	m.focus, m.returnTo = focusList, focusList
	m.lay = computeLayout(m.width, m.height, len(next.terms), m.zoomed)
	next.events.add(m.now(), levelInfo, "switched to %s", next.targetName())
	switch next.state {
	case openPending:
		// A fleet's sandbox is dialled the first time it is shown.
		next.state = openRunning
		next.events.add(m.now(), levelInfo, "opening %s", next.targetName())
		cmds = append(cmds, m.openCmd(next))
	case openReady:
		cmds = append(cmds, m.startWatching(next))
	case openFailed:
		// Try again: it may be up by now. A paused sandbox waits for its
		// refresh (or a resume) to say it runs.
		if next.spec.Open != nil && !next.providerPaused() {
			next.state = openRunning
			cmds = append(cmds, m.openCmd(next))
		}
	}
	cmds = append(cmds, m.syncDetail())
	return tea.Batch(cmds...)
}

// findContext resolves what ":ctx ARG" names: an exact name, a 1-based
// index, a unique prefix, or a unique substring.
func (m *Model) findContext(arg string) (int, error) {
	for i, sb := range m.sandboxes {
		if sb.spec.Name == arg {
			return i, nil
		}
	}
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(m.sandboxes) {
		return n - 1, nil
	}
	for _, match := range []func(name string) bool{
		func(name string) bool { return strings.HasPrefix(name, arg) },
		func(name string) bool { return strings.Contains(name, arg) },
	} {
		var hits []int
		for i, sb := range m.sandboxes {
			if match(sb.spec.Name) {
				hits = append(hits, i)
			}
		}
		if len(hits) == 1 {
			return hits[0], nil
		}
		if len(hits) > 1 {
			return 0, fmt.Errorf("%q matches %d sandboxes; be more precise (or use its number)", arg, len(hits))
		}
	}
	return 0, fmt.Errorf("no sandbox %q (c lists them)", arg)
}

// cmdCtx is ":ctx [NAME|N]": the picker, or a direct switch.
func (m *Model) cmdCtx(argv []string) tea.Cmd {
	if len(argv) == 0 {
		m.openContextPicker()
		return nil
	}
	i, err := m.findContext(strings.Join(argv, " "))
	if err != nil {
		m.setStatus(levelError, err.Error())
		return nil
	}
	return m.switchTo(i)
}

// allActiveTeardowns counts escalating teardowns in every context.
func (m *Model) allActiveTeardowns() int {
	n := 0
	for _, sb := range m.sandboxes {
		n += sb.activeTeardowns()
	}
	return n
}
