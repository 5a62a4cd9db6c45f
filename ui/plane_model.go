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
	return m.opts.Tick(every, func(time.Time) tea.Msg { return planeTickMsg{} })
}

// onPlaneTick asks each provider for what is due.
func (m *Model) onPlaneTick() tea.Cmd {
	now := m.now()
	cmds := []tea.Cmd{m.planeTickCmd()}
	// Metrics only for what is on screen: the sandbox shown, or in the
	// fleet view the row measured longest ago (one per tick; the provider
	// spaces them further).
	measure := map[*sandboxState]bool{}
	if m.fleet == nil {
		measure[m.cur] = true
	} else {
		var oldest *sandboxState
		for _, i := range m.fleet.window(m) {
			sb := m.ctxs[i]
			if sb.spec.Plane == nil || sb.pl.gone || sb.pl.info.Paused() || sb.pl.measuring {
				continue
			}
			if oldest == nil || sb.pl.measuredAt.Before(oldest.pl.measuredAt) {
				oldest = sb
			}
		}
		if oldest != nil {
			measure[oldest] = true
		}
	}
	for _, sb := range m.ctxs {
		p := &sb.pl
		if sb.spec.Plane == nil || p.gone {
			continue
		}
		if !p.describing && now.Sub(p.describedAt) >= m.opts.PlaneRefresh {
			cmds = append(cmds, m.describeCmd(sb))
		}
		if measure[sb] && !p.info.Paused() && !p.measuring && now.Sub(p.measuredAt) >= m.opts.MetricsRefresh {
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

func (m *Model) describeCmd(sb *sandboxState) tea.Cmd {
	sb.pl.describing, sb.pl.describedAt = true, m.now()
	plane, ctx := sb.spec.Plane, m.ctx
	return func() tea.Msg {
		c, cancel := context.WithTimeout(ctx, rpcTimeout)
		defer cancel()
		info, err := plane.Describe(c)
		return scopedMsg{sb, planeInfoMsg{info: info, err: err}}
	}
}

// updatePlane applies the answers of sb's provider to sb.
func (m *Model) updatePlane(sb *sandboxState, msg tea.Msg) (tea.Cmd, bool) {
	switch msg := msg.(type) {
	case planeInfoMsg:
		return m.onPlaneInfo(sb, msg), true
	case planeMetricsMsg:
		sb.pl.measuring = false
		if msg.err == nil && msg.ok {
			sb.pl.metrics, sb.pl.hasMetrics = msg.m, true
		}
		return nil, true
	case planeActionMsg:
		return m.onPlaneAction(sb, msg), true
	case planeLogsMsg:
		if d, ok := m.dialog.(*planeLogsDialog); ok && m.dialogSB == sb {
			d.lines, d.err, d.loading = msg.lines, msg.err, false
		}
		return nil, true
	}
	return nil, false
}

func (m *Model) onPlaneInfo(sb *sandboxState, msg planeInfoMsg) tea.Cmd {
	p := &sb.pl
	p.describing = false
	if msg.err != nil {
		if errors.Is(msg.err, ErrSandboxGone) {
			if !p.gone {
				sb.events.add(m.now(), levelError, "%s is gone: its provider no longer knows it (killed or expired)", sb.targetName())
			}
			p.gone = true
			if c, ok := m.waiting[sb.spec.Name]; ok && m.ctxs[sb.index] == sb {
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

// planePaused says sb is a provider's paused sandbox: its daemon must not
// be dialled (traffic could wake it).
func (sb *sandboxState) planePaused() bool { return sb.spec.Plane != nil && sb.pl.info.Paused() }

// askPlane confirms a resume or an extend of sb.
func (m *Model) askPlane(sb *sandboxState, verb string, timeout time.Duration) tea.Cmd {
	switch {
	case sb.spec.Plane == nil:
		m.setStatus(levelInfo, sb.targetName()+" has no provider to "+verb+" it (only E2B sandboxes do)")
		return nil
	case m.readOnly(sb):
		m.refuse(sb, verb)
		return nil
	case sb.pl.gone:
		m.setStatus(levelError, sb.targetName()+" is gone; nothing to "+verb)
		return nil
	case sb.pl.acting != "":
		m.setStatus(levelWarn, sb.pl.acting+" of "+sb.targetName()+" is still in flight")
		return nil
	case verb == "resume" && !sb.pl.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is running; %s extends it", sb.targetName(), m.keys.Extend.Help().Key))
		return nil
	case verb == "extend" && sb.pl.info.Paused():
		m.setStatus(levelInfo, fmt.Sprintf("%s is paused; %s resumes it", sb.targetName(), m.keys.Resume.Help().Key))
		return nil
	}
	if timeout <= 0 {
		timeout = sb.spec.Plane.DefaultTimeout()
	}
	info := sb.pl.info
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
	m.openDialog(sb, newConfirm(title, body, verb, false, func(m *Model) tea.Cmd { return m.planeActionCmd(sb, verb, timeout) }))
	return nil
}

func (m *Model) planeActionCmd(sb *sandboxState, verb string, timeout time.Duration) tea.Cmd {
	if m.readOnly(sb) { // the dialog may have outlived a change of mind
		m.refuse(sb, verb)
		return nil
	}
	plane, ctx := sb.spec.Plane, m.ctx
	sb.pl.acting = verb
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
		return scopedMsg{sb, planeActionMsg{verb: verb, timeout: timeout, err: err}}
	}
}

func (m *Model) onPlaneAction(sb *sandboxState, msg planeActionMsg) tea.Cmd {
	sb.pl.acting = ""
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

// planeBadge is the header's part for a provider's sandbox: its state,
// the countdown to its end (a warning under two minutes) and its metrics.
func (m *Model) planeBadge() string {
	st, p := m.st, &m.cur.pl
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
	return m.askPlane(m.cur, verb, timeout)
}

// pastTense is what the status line says was done: "resumed", "extended".
func pastTense(verb string) string {
	if strings.HasSuffix(verb, "e") {
		return verb + "d"
	}
	return verb + "ed"
}
