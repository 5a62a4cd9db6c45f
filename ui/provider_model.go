package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
)

// The provider side of a sandbox (Context.Plane): its state and end time
// are re-read every Options.PlaneRefresh and its metrics every
// Options.MetricsRefresh (for the sandbox on screen, and for all while the
// picker is open), never more often. Only Resume and Extend change
// anything, each after a confirmation and never in read-only mode.

// providerState is what the TUI knows of one sandbox's provider.
type providerState struct {
	info       ProviderInfo
	err        error // the last refresh's failure, if it failed
	gone       bool  // the provider no longer knows the sandbox
	metrics    ProviderMetrics
	hasMetrics bool
	// In flight, and when last asked: the cadence counts from the asking.
	describing, measuring   bool
	describedAt, measuredAt time.Time
	acting                  string // "resume" or "extend" while in flight
}

type providerTickMsg struct{}

type providerInfoMsg struct {
	info ProviderInfo
	err  error
}

type providerMetricsMsg struct {
	m   ProviderMetrics
	ok  bool
	err error
}

type providerActionMsg struct {
	verb    string
	timeout time.Duration
	err     error
}

// hasProviders says whether any sandbox has a provider to refresh.
func (m *Model) hasProviders() bool {
	for _, sb := range m.sandboxes {
		if sb.spec.Provider != nil {
			return true
		}
	}
	return false
}

// startProviders begins the refresh cycle: the listing just described every
// sandbox, so the first describe waits a period; metrics come at once.
func (m *Model) startProviders() tea.Cmd {
	if !m.hasProviders() {
		return nil
	}
	now := m.now()
	for _, sb := range m.sandboxes {
		sb.prov.describedAt = now
	}
	return m.onProviderTick()
}

func (m *Model) providerTickCmd() tea.Cmd {
	every := min(m.opts.ProviderRefresh, m.opts.MetricsRefresh)
	return m.opts.Tick(every, func(time.Time) tea.Msg { return providerTickMsg{} })
}

// onProviderTick asks each provider for what is due.
func (m *Model) onProviderTick() tea.Cmd {
	now := m.now()
	cmds := []tea.Cmd{m.providerTickCmd()}
	// Metrics only for what is on screen: the sandbox shown, or in the
	// fleet view the row measured longest ago (one per tick; the provider
	// spaces them further).
	measure := map[*sandboxState]bool{}
	if m.fleet == nil {
		measure[m.cur] = true
	} else {
		var oldest *sandboxState
		for _, i := range m.fleet.window(m) {
			sb := m.sandboxes[i]
			if sb.spec.Provider == nil || sb.prov.gone || sb.prov.info.Paused() || sb.prov.measuring {
				continue
			}
			if oldest == nil || sb.prov.measuredAt.Before(oldest.prov.measuredAt) {
				oldest = sb
			}
		}
		if oldest != nil {
			measure[oldest] = true
		}
	}
	for _, sb := range m.sandboxes {
		p := &sb.prov
		if sb.spec.Provider == nil || p.gone {
			continue
		}
		if !p.describing && now.Sub(p.describedAt) >= m.opts.ProviderRefresh {
			cmds = append(cmds, m.describeCmd(sb))
		}
		if measure[sb] && !p.info.Paused() && !p.measuring && now.Sub(p.measuredAt) >= m.opts.MetricsRefresh {
			p.measuring, p.measuredAt = true, now
			plane, ctx := sb.spec.Provider, m.ctx
			cmds = append(cmds, func() tea.Msg {
				c, cancel := context.WithTimeout(ctx, rpcTimeout)
				defer cancel()
				mt, ok, err := plane.Metrics(c)
				return scopedMsg{sb, providerMetricsMsg{m: mt, ok: ok, err: err}}
			})
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) describeCmd(sb *sandboxState) tea.Cmd {
	sb.prov.describing, sb.prov.describedAt = true, m.now()
	plane, ctx := sb.spec.Provider, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		info, err := plane.Describe(c)
		return scopedMsg{sb, providerInfoMsg{info: info, err: err}}
	}
}

// updateProvider applies the answers of sb's provider to sb.
func (m *Model) updateProvider(sb *sandboxState, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case providerInfoMsg:
		return m.onProviderInfo(sb, msg), true
	case providerMetricsMsg:
		sb.prov.measuring = false
		if msg.err == nil && msg.ok {
			sb.prov.metrics, sb.prov.hasMetrics = msg.m, true
		}
		return nil, true
	case providerActionMsg:
		return m.onProviderAction(sb, msg), true
	case providerLogsMsg:
		if d, ok := m.dialog.(*providerLogsDialog); ok && m.dialogSB == sb {
			d.lines, d.err, d.loading = msg.lines, msg.err, false
		}
		return nil, true
	}
	return nil, false
}

func (m *Model) onProviderInfo(sb *sandboxState, msg providerInfoMsg) tea.Cmd {
	p := &sb.prov
	p.describing = false
	if msg.err != nil {
		if errors.Is(msg.err, ErrSandboxGone) {
			if !p.gone {
				sb.events.add(m.now(), levelError, "%s is gone: its provider no longer knows it (killed or expired)", sb.targetName())
			}
			p.gone = true
			if c, ok := m.waiting[sb.spec.Name]; ok && m.sandboxes[sb.index] == sb {
				return m.replaceContext(sb.index, c)
			}
			return nil
		}
		if p.err == nil {
			sb.events.add(m.now(), levelWarn, "%s: cannot refresh its state: %v", sb.targetName(), msg.err)
		}
		p.err = msg.err
		return nil
	}
	was := p.info
	p.info, p.err = msg.info, nil
	switch {
	case was.Paused() && !p.info.Paused():
		sb.events.add(m.now(), levelOK, "%s is running again", sb.targetName())
		p.measuredAt = time.Time{} // metrics are due at once
		switch {
		case sb.state == openFailed && sb.spec.Open != nil:
			sb.state = openRunning
			return m.openCmd(sb)
		case sb.watched && sb.conn == connLost:
			sb.watchGen++
			return m.watchCmd(sb, sb.watchGen)
		}
	case !was.Paused() && p.info.Paused():
		sb.events.add(m.now(), levelWarn, "%s was paused: nothing runs in it until it is resumed (%s)", sb.targetName(), m.keys.Resume.Help().Key)
		p.hasMetrics = false
	}
	return nil
}

// providerPaused says sb is a provider's paused sandbox: its daemon must not
// be dialled (traffic could wake it).
func (sb *sandboxState) providerPaused() bool {
	return sb.spec.Provider != nil && sb.prov.info.Paused()
}

// askProvider confirms a resume or an extend of sb.
func (m *Model) askProvider(sb *sandboxState, verb string, timeout time.Duration) tea.Cmd {
	switch {
	case sb.spec.Provider == nil:
		m.setStatus(levelInfo, sb.targetName()+" has no provider to "+verb+" it (only E2B sandboxes do)")
		return nil
	case m.readOnly(sb):
		m.refuse(sb, verb)
		return nil
	case sb.prov.gone:
		m.setStatus(levelError, sb.targetName()+" is gone; nothing to "+verb)
		return nil
	case sb.prov.acting != "":
		m.setStatus(levelWarn, sb.prov.acting+" of "+sb.targetName()+" is still in flight")
		return nil
	case verb == "resume" && !sb.prov.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is running; %s extends it", sb.targetName(), m.keys.Extend.Help().Key))
		return nil
	case verb == "extend" && sb.prov.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is paused; %s resumes it", sb.targetName(), m.keys.Resume.Help().Key))
		return nil
	}
	if timeout <= 0 {
		timeout = sb.spec.Provider.DefaultTimeout()
	}
	info := sb.prov.info
	body := []string{
		fmt.Sprintf("%s · %s · %s", info.templateName(), info.State, FormatMetadata(info.Metadata)),
		"now ends in " + FormatTimeLeft(info.EndAt.Sub(m.now())),
		"",
	}
	if verb == "resume" {
		body = append(body, fmt.Sprintf("Wake it: it runs, and is billed, until %s from now.", timeout))
	} else {
		body = append(body, fmt.Sprintf("Set it to end %s from now.", timeout))
	}
	title := fmt.Sprintf("%s %s?", verb, sb.targetName())
	m.openDialog(sb, newConfirm(title, body, verb, false, func(m *Model) tea.Cmd { return m.providerActionCmd(sb, verb, timeout) }))
	return nil
}

func (m *Model) providerActionCmd(sb *sandboxState, verb string, timeout time.Duration) tea.Cmd {
	if m.readOnly(sb) { // the dialog may have outlived a change of mind
		m.refuse(sb, verb)
		return nil
	}
	plane, ctx := sb.spec.Provider, m.ctx
	sb.prov.acting = verb
	sb.events.add(m.now(), levelInfo, "%s %s for %s…", verb, sb.targetName(), timeout)
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		var err error
		if verb == "resume" {
			err = plane.Resume(c, timeout)
		} else {
			err = plane.Extend(c, timeout)
		}
		return scopedMsg{sb, providerActionMsg{verb: verb, timeout: timeout, err: err}}
	}
}

func (m *Model) onProviderAction(sb *sandboxState, msg providerActionMsg) tea.Cmd {
	sb.prov.acting = ""
	if msg.err != nil {
		sb.events.add(m.now(), levelError, "%s %s failed: %v", msg.verb, sb.targetName(), msg.err)
		m.setStatus(levelError, fmt.Sprintf("%s failed: %v", msg.verb, msg.err))
		return nil
	}
	sb.events.add(m.now(), levelOK, "%s %s: it ends in about %s", msg.verb, sb.targetName(), msg.timeout)
	m.setStatus(levelInfo, fmt.Sprintf("%s %s", pastTense(msg.verb), sb.targetName()))
	// Read the new state back at once; a resumed sandbox is dialled then.
	return m.describeCmd(sb)
}

// providerBadge is the header's part for a provider's sandbox: its state,
// the countdown to its end (a warning under two minutes) and its metrics.
func (m *Model) providerBadge() string {
	st, p := m.st, &m.cur.prov
	switch {
	case p.gone:
		return st.danger.Render("✗ gone")
	case p.info.Paused():
		return st.warning.Render("⏸ paused (" + m.keys.Resume.Help().Key + " resumes)  " + p.info.endText())
	}
	s := st.header.Render(p.info.templateName())
	// A sandbox with no end time (a Kubernetes pod) has no countdown.
	if left := p.info.EndAt.Sub(m.now()); p.info.EndAt.IsZero() {
	} else if left < timeLeftWarning {
		s += st.header.Render("  ") + st.warning.Render("⚠ "+FormatTimeLeft(left)+" left")
	} else {
		s += st.header.Render("  " + FormatTimeLeft(left) + " left")
	}
	if p.hasMetrics {
		s += st.header.Render("  " + formatMetrics(p.metrics))
	}
	if wait, why := m.planeBackoff(); wait > 0 {
		s += st.header.Render("  ") + st.warning.Render(fmt.Sprintf("⚠ control plane backing off (%s), %s", why, wait.Round(time.Second)))
	}
	return s
}

// cmdProvider is ":resume [DURATION]" and ":extend [DURATION]".
func (m *Model) cmdProvider(verb string, argv []string) tea.Cmd {
	var timeout time.Duration
	if len(argv) > 0 {
		d, err := time.ParseDuration(argv[0])
		if err != nil || d < time.Second {
			m.setStatus(levelError, fmt.Sprintf(":e2b-%s %s: want a duration of at least 1s, e.g. 10m", verb, argv[0]))
			return nil
		}
		timeout = d
	}
	return m.askProvider(m.cur, verb, timeout)
}

// pastTense is what the status line says was done: "resumed", "extended".
func pastTense(verb string) string {
	if strings.HasSuffix(verb, "e") {
		return verb + "d"
	}
	return verb + "ed"
}
