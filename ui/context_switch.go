package ui

import (
	"fmt"
	"strconv"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
)

// Switching between contexts, and keeping each context's work in its own
// lane.
//
// Every context's Source is opened in the background at startup. The
// process table of a context is watched from the first time it is shown
// and stays watched afterwards (one stream per visited sandbox), so a
// teardown started in A keeps reporting, under A, after a switch to B.
// Marks, the selection and the filter stay with their context.

// within runs f with sb in scope, then puts the context on screen back in
// scope. Source results and dialog keys go through it, so they act on the
// context they belong to even after the operator switched.
func (m *Model) within(sb *sandbox, f func() tea.Cmd) tea.Cmd {
	if sb == nil {
		sb = m.cur
	}
	m.sandbox = sb
	defer func() {
		if m.sandbox != m.cur {
			m.sandbox = m.cur
		}
		if sb != m.cur { // a background context may have changed its terminals
			m.lay = computeLayout(m.width, m.height, len(m.terms), m.zoomed)
		}
	}()
	return f()
}

// onScreen says whether the context in scope is the one shown; only then
// may a result move the focus, the selection's stream or the layout.
func (m *Model) onScreen() bool { return m.sandbox == m.cur }

// multi says whether there is more than one context to tell apart.
func (m *Model) multi() bool { return len(m.ctxs) > 1 }

// onOpened records the result of a context's Open.
func (m *Model) onOpened(msg openedMsg) tea.Cmd {
	if msg.err != nil {
		m.state, m.openErr = openFailed, msg.err
		if m.planePaused() {
			m.events.add(m.now(), levelWarn, "%s is paused: not dialled, so it stays paused (%s resumes it)", m.targetName(), m.keys.Resume.Help().Key)
			return nil
		}
		m.events.add(m.now(), levelError, "cannot reach %s: %v", m.targetName(), msg.err)
		return nil
	}
	m.state, m.src, m.openErr = openReady, msg.src, nil
	if m.onScreen() && !m.watched {
		return m.startWatching()
	}
	return nil
}

// startWatching starts the header query and the process table watch of
// the context in scope, once.
func (m *Model) startWatching() tea.Cmd {
	if m.watched || m.src == nil {
		return nil
	}
	m.watched = true
	m.events.add(m.now(), levelInfo, "connecting to %s", m.targetName())
	return tea.Batch(m.infoCmd(), m.watchCmd(m.watchGen))
}

// usable says whether the context in scope can take an action, and says
// why not in the footer otherwise.
func (m *Model) usable() bool {
	if m.state == openReady {
		return true
	}
	if m.state == openFailed {
		m.setStatus(levelError, fmt.Sprintf("%s is unreachable: %v (c picks another sandbox)", m.targetName(), errText(m.openErr)))
	} else {
		m.setStatus(levelWarn, m.targetName()+" is still connecting")
	}
	return false
}

// switchTo shows context i. The detail stream of the old context is closed
// (it only feeds the screen); everything else of the old context stays as
// it was, teardowns included.
func (m *Model) switchTo(i int) tea.Cmd {
	if i < 0 || i >= len(m.ctxs) {
		return nil
	}
	next := m.ctxs[i]
	if next == m.cur {
		return nil
	}
	if m.focus == focusAttached {
		m.detail.term.replies.set(nil)
	}
	cmds := []tea.Cmd{m.detail.detach()}
	m.detailGen++
	m.attachReq = 0
	m.cur, m.sandbox = next, next
	m.focus, m.returnTo = focusList, focusList
	m.lay = computeLayout(m.width, m.height, len(m.terms), m.zoomed)
	m.events.add(m.now(), levelInfo, "switched to %s", m.targetName())
	switch m.state {
	case openReady:
		cmds = append(cmds, m.startWatching())
	case openFailed:
		// Try again: it may be up by now. A paused sandbox waits for its
		// refresh (or a resume) to say it runs.
		if m.spec.Open != nil && !m.planePaused() {
			m.state = openRunning
			cmds = append(cmds, m.openCmd(m.sandbox))
		}
	}
	cmds = append(cmds, m.syncDetail())
	return tea.Batch(cmds...)
}

// findContext resolves what ":ctx ARG" names: an exact name, a 1-based
// index, a unique prefix, or a unique substring.
func (m *Model) findContext(arg string) (int, error) {
	for i, sb := range m.ctxs {
		if sb.spec.Name == arg {
			return i, nil
		}
	}
	if n, err := strconv.Atoi(arg); err == nil && n >= 1 && n <= len(m.ctxs) {
		return n - 1, nil
	}
	for _, match := range []func(name string) bool{
		func(name string) bool { return strings.HasPrefix(name, arg) },
		func(name string) bool { return strings.Contains(name, arg) },
	} {
		var hits []int
		for i, sb := range m.ctxs {
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
	for _, sb := range m.ctxs {
		n += sb.activeTeardowns()
	}
	return n
}
