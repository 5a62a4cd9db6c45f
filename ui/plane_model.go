package ui

import (
	"context"
	"errors"
	"fmt"
	"time"

	tea "github.com/charmbracelet/bubbletea"
)

// The provider side of a sandbox (Context.Plane): its state and end time
// are re-read every Options.PlaneRefresh and its metrics every
// Options.MetricsRefresh (for the sandbox on screen, and for all while the
// picker is open), never more often. Only Resume and Extend change
// anything, each after a confirmation and never in read-only mode.

// planeState is what the TUI knows of one sandbox's provider.
type planeState struct {
	info       PlaneInfo
	err        error // the last refresh's failure, if it failed
	gone       bool  // the provider no longer knows the sandbox
	metrics    PlaneMetrics
	hasMetrics bool
	// In flight, and when last asked: the cadence counts from the asking.
	describing, measuring   bool
	describedAt, measuredAt time.Time
	acting                  string // "resume" or "extend" while in flight
}

type planeTickMsg struct{}

type planeInfoMsg struct {
	info PlaneInfo
	err  error
}

type planeMetricsMsg struct {
	m   PlaneMetrics
	ok  bool
	err error
}

type planeActionMsg struct {
	verb    string
	timeout time.Duration
	err     error
}

// hasPlanes says whether any context has a provider to refresh.
func (m *Model) hasPlanes() bool {
	for _, sb := range m.ctxs {
		if sb.spec.Plane != nil {
			return true
		}
	}
	return false
}

// startPlanes begins the refresh cycle: the listing just described every
// sandbox, so the first describe waits a period; metrics come at once.
func (m *Model) startPlanes() tea.Cmd {
	if !m.hasPlanes() {
		return nil
	}
	now := m.now()
	for _, sb := range m.ctxs {
		sb.pl.describedAt = now
	}
	return m.onPlaneTick()
}

func (m *Model) planeTickCmd() tea.Cmd {
	every := min(m.opts.PlaneRefresh, m.opts.MetricsRefresh)
	return tea.Tick(every, func(time.Time) tea.Msg { return planeTickMsg{} })
}

// onPlaneTick asks each provider for what is due.
func (m *Model) onPlaneTick() tea.Cmd {
	now := m.now()
	_, picking := m.dialog.(*contextPicker)
	cmds := []tea.Cmd{m.planeTickCmd()}
	for _, sb := range m.ctxs {
		p := &sb.pl
		if sb.spec.Plane == nil || p.gone {
			continue
		}
		if !p.describing && now.Sub(p.describedAt) >= m.opts.PlaneRefresh {
			cmds = append(cmds, m.describeCmd(sb))
		}
		if (sb == m.cur || picking) && !p.info.Paused() && !p.measuring && now.Sub(p.measuredAt) >= m.opts.MetricsRefresh {
			p.measuring, p.measuredAt = true, now
			plane, ctx := sb.spec.Plane, m.ctx
			cmds = append(cmds, func() tea.Msg {
				c, cancel := context.WithTimeout(ctx, rpcTimeout)
				defer cancel()
				mt, ok, err := plane.Metrics(c)
				return scopedMsg{sb, planeMetricsMsg{m: mt, ok: ok, err: err}}
			})
		}
	}
	return tea.Batch(cmds...)
}

func (m *Model) describeCmd(sb *sandbox) tea.Cmd {
	sb.pl.describing, sb.pl.describedAt = true, m.now()
	plane, ctx := sb.spec.Plane, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		info, err := plane.Describe(c)
		return scopedMsg{sb, planeInfoMsg{info: info, err: err}}
	}
}

// updatePlane applies a provider's answers to the context in scope.
func (m *Model) updatePlane(msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case planeInfoMsg:
		return m.onPlaneInfo(msg), true
	case planeMetricsMsg:
		m.pl.measuring = false
		if msg.err == nil && msg.ok {
			m.pl.metrics, m.pl.hasMetrics = msg.m, true
		}
		return nil, true
	case planeActionMsg:
		return m.onPlaneAction(msg), true
	case planeLogsMsg:
		if d, ok := m.dialog.(*planeLogsDialog); ok && m.dialogSB == m.sandbox {
			d.lines, d.err, d.loading = msg.lines, msg.err, false
		}
		return nil, true
	}
	return nil, false
}

func (m *Model) onPlaneInfo(msg planeInfoMsg) tea.Cmd {
	p := &m.pl
	p.describing = false
	if msg.err != nil {
		if errors.Is(msg.err, ErrSandboxGone) {
			if !p.gone {
				m.events.add(m.now(), levelError, "%s is gone: its provider no longer knows it (killed or expired)", m.targetName())
			}
			p.gone = true
			return nil
		}
		if p.err == nil {
			m.events.add(m.now(), levelWarn, "%s: cannot refresh its state: %v", m.targetName(), msg.err)
		}
		p.err = msg.err
		return nil
	}
	was := p.info
	p.info, p.err = msg.info, nil
	switch {
	case was.Paused() && !p.info.Paused():
		m.events.add(m.now(), levelOK, "%s is running again", m.targetName())
		p.measuredAt = time.Time{} // metrics are due at once
		switch {
		case m.state == openFailed && m.spec.Open != nil:
			m.state = openRunning
			return m.openCmd(m.sandbox)
		case m.watched && m.conn == connLost:
			m.watchGen++
			return m.watchCmd(m.watchGen)
		}
	case !was.Paused() && p.info.Paused():
		m.events.add(m.now(), levelWarn, "%s was paused: nothing runs in it until it is resumed (%s)", m.targetName(), m.keys.Resume.Help().Key)
		p.hasMetrics = false
	}
	return nil
}

// planePaused says the context in scope is a provider's paused sandbox:
// its daemon must not be dialled (traffic could wake it).
func (m *Model) planePaused() bool { return m.spec.Plane != nil && m.pl.info.Paused() }

// askPlane confirms a resume or an extend of the sandbox in scope.
func (m *Model) askPlane(verb string, timeout time.Duration) tea.Cmd {
	switch {
	case m.spec.Plane == nil:
		m.setStatus(levelInfo, m.targetName()+" has no provider to "+verb+" it (only E2B sandboxes do)")
		return nil
	case m.readOnly():
		m.refuse(verb)
		return nil
	case m.pl.gone:
		m.setStatus(levelError, m.targetName()+" is gone; nothing to "+verb)
		return nil
	case m.pl.acting != "":
		m.setStatus(levelWarn, m.pl.acting+" of "+m.targetName()+" is still in flight")
		return nil
	case verb == "resume" && !m.pl.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is running; %s extends it", m.targetName(), m.keys.Extend.Help().Key))
		return nil
	case verb == "extend" && m.pl.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is paused; %s resumes it", m.targetName(), m.keys.Resume.Help().Key))
		return nil
	}
	if timeout <= 0 {
		timeout = m.spec.Plane.DefaultTimeout()
	}
	info := m.pl.info
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
	title := fmt.Sprintf("%s %s?", verb, m.targetName())
	m.openDialog(newConfirm(title, body, verb, false, func(m *Model) tea.Cmd { return m.planeActionCmd(verb, timeout) }))
	return nil
}

func (m *Model) planeActionCmd(verb string, timeout time.Duration) tea.Cmd {
	if m.readOnly() { // the dialog may have outlived a change of mind
		m.refuse(verb)
		return nil
	}
	sb, plane, ctx := m.sandbox, m.spec.Plane, m.ctx
	m.pl.acting = verb
	m.events.add(m.now(), levelInfo, "%s %s for %s…", verb, m.targetName(), timeout)
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		var err error
		if verb == "resume" {
			err = plane.Resume(c, timeout)
		} else {
			err = plane.Extend(c, timeout)
		}
		return scopedMsg{sb, planeActionMsg{verb: verb, timeout: timeout, err: err}}
	}
}

func (m *Model) onPlaneAction(msg planeActionMsg) tea.Cmd {
	m.pl.acting = ""
	if msg.err != nil {
		m.events.add(m.now(), levelError, "%s %s failed: %v", msg.verb, m.targetName(), msg.err)
		m.setStatus(levelError, fmt.Sprintf("%s failed: %v", msg.verb, msg.err))
		return nil
	}
	m.events.add(m.now(), levelOK, "%s %s: it ends in about %s", msg.verb, m.targetName(), msg.timeout)
	m.setStatus(levelInfo, fmt.Sprintf("%sd %s", msg.verb, m.targetName()))
	// Read the new state back at once; a resumed sandbox is dialled then.
	return m.describeCmd(m.sandbox)
}

// planeBadge is the header's part for a provider's sandbox: its state,
// the countdown to its end (a warning under two minutes) and its metrics.
func (m *Model) planeBadge() string {
	st, p := m.st, &m.pl
	switch {
	case p.gone:
		return st.danger.Render("✗ gone")
	case p.info.Paused():
		return st.warning.Render("⏸ paused (" + m.keys.Resume.Help().Key + " resumes)  " + p.info.endText())
	}
	s := st.header.Render(p.info.templateName())
	left := p.info.EndAt.Sub(m.now())
	if left < timeLeftWarning {
		s += st.header.Render("  ") + st.warning.Render("⚠ "+FormatTimeLeft(left)+" left")
	} else {
		s += st.header.Render("  " + FormatTimeLeft(left) + " left")
	}
	if p.hasMetrics {
		s += st.header.Render("  " + formatMetrics(p.metrics))
	}
	return s
}

// cmdPlane is ":resume [DURATION]" and ":extend [DURATION]".
func (m *Model) cmdPlane(verb string, argv []string) tea.Cmd {
	var timeout time.Duration
	if len(argv) > 0 {
		d, err := time.ParseDuration(argv[0])
		if err != nil || d < time.Second {
			m.setStatus(levelError, fmt.Sprintf(":e2b-%s %s: want a duration of at least 1s, e.g. 10m", verb, argv[0]))
			return nil
		}
		timeout = d
	}
	return m.askPlane(verb, timeout)
}
