package ui

import (
	tea "charm.land/bubbletea/v2"
)

// Sandboxes that appear while the TUI runs (Options.Arrivals): a pod
// created after start. Each is added to the sandboxes as if it had been
// there from the start: its counts come from its Summary without a visit,
// its provider is refreshed with the others. A name already shown is a
// new sandbox of that name (a pod re-created): it takes the old one's
// place once the old one is gone, and its provider is asked at once so
// that this is known without waiting for the next refresh.

// arrivalBatch bounds how many arrivals one message carries: a burst (a
// deployment scaled up) is added in one update, not one frame each.
const arrivalBatch = 256

// arrivalsMsg carries sandboxes that appeared; closed says the channel
// was closed and no more will come.
type arrivalsMsg struct {
	ctxs   []SandboxSpec
	closed bool
}

// awaitArrivals waits for the next sandboxes on Options.Arrivals, until
// the TUI closes.
func (m *Model) awaitArrivals() tea.Cmd {
	ch, ctx := m.opts.Arrivals, m.ctx
	if ch == nil {
		return nil
	}
	return func() tea.Msg {
		var msg arrivalsMsg
		select {
		case c, ok := <-ch:
			if !ok {
				return arrivalsMsg{closed: true}
			}
			msg.ctxs = append(msg.ctxs, c)
		case <-ctx.Done():
			return nil
		}
		for len(msg.ctxs) < arrivalBatch {
			select {
			case c, ok := <-ch:
				if !ok {
					msg.closed = true
					return msg
				}
				msg.ctxs = append(msg.ctxs, c)
			default:
				return msg
			}
		}
		return msg
	}
}

// onArrivals adds what arrived and waits for more.
func (m *Model) onArrivals(msg arrivalsMsg) tea.Cmd {
	planes := m.hasProviders()
	var cmds []tea.Cmd
	for _, c := range msg.ctxs {
		cmds = append(cmds, m.addContext(c))
	}
	m.backoffs = nil // a new provider may have come with them
	if !planes && m.hasProviders() {
		cmds = append(cmds, m.onProviderTick()) // the first provider: start its cycle
	}
	cmds = append(cmds, m.scheduleSummaries(m.now()))
	if !msg.closed {
		cmds = append(cmds, m.awaitArrivals())
	}
	return tea.Batch(cmds...)
}

// addContext adds c, or marks it to replace the sandbox of its name.
func (m *Model) addContext(c SandboxSpec) tea.Cmd {
	if c.Name == "" {
		m.log.add(m.now(), levelWarn, "", "a sandbox without a name appeared; not shown")
		return nil
	}
	for i, sb := range m.sandboxes {
		if sb.spec.Name != c.Name {
			continue
		}
		if sb.spec.Provider != nil && sb.prov.gone {
			return m.replaceContext(i, c)
		}
		if sb.spec.Provider == nil {
			return nil // nothing says the old one is gone: a duplicate
		}
		// Shown and not known gone: ask its provider now; the answer
		// that it is gone brings c in (onProviderInfo).
		if m.waiting == nil {
			m.waiting = map[string]SandboxSpec{}
		}
		m.waiting[c.Name] = c
		if !sb.prov.describing {
			return m.describeCmd(sb)
		}
		return nil
	}
	sb := newSandbox(c, len(m.sandboxes), &m.log)
	m.sandboxes = append(m.sandboxes, sb)
	sb.prov.describedAt = m.now() // what arrived was just described
	sb.events.add(m.now(), levelInfo, "%s appeared", sb.targetName())
	return m.openArrived(sb)
}

// replaceContext puts c in the place of the gone sandbox at i: same row,
// a fresh sandbox. Answers still in flight for the old one go to it, not
// to c's, and so does a dialog opened for it: a pgid chosen in the old
// sandbox means nothing in the new one.
func (m *Model) replaceContext(i int, c SandboxSpec) tea.Cmd {
	old := m.sandboxes[i]
	sb := newSandbox(c, i, &m.log)
	sb.prov.describedAt = m.now()
	m.sandboxes[i] = sb
	delete(m.waiting, c.Name)
	sb.events.add(m.now(), levelOK, "%s is back: a new sandbox of that name", sb.targetName())
	cmds := []tea.Cmd{m.scheduleSummaries(m.now())}
	if m.cur != old {
		return tea.Batch(append(cmds, m.openArrived(sb))...)
	}
	// On screen: show the new one as a switch would.
	m.cur = sb
	if m.fleet == nil {
		if m.focus == focusAttached {
			m.detail.term.replies.set(nil)
		}
		cmds = append(cmds, m.detail.detach())
		m.detailGen++
		m.attachReq = 0
		if m.focus != focusDialog {
			m.focus = focusList
		}
		m.returnTo = focusList
		m.lay = computeLayout(m.width, m.height, len(sb.terms), m.zoomed)
		if sb.state == openPending {
			sb.state = openRunning
			cmds = append(cmds, m.openCmd(sb))
		}
		cmds = append(cmds, m.syncDetail())
	}
	return tea.Batch(cmds...)
}

// openArrived opens a new sandbox that has no Summary now, as Init does
// (one with a Summary is dialled when it is shown).
func (m *Model) openArrived(sb *sandboxState) tea.Cmd {
	if sb.state != openPending || sb.spec.Summary != nil {
		return nil
	}
	sb.state = openRunning
	return m.openCmd(sb)
}
