package ui

import (
	"context"
	"sort"
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/sandbox"
)

// The fleet: what the TUI knows of every sandbox without visiting it. A
// sandbox with a Summary is not dialled at startup; instead its counts
// (running groups, terminals, terminals waiting for input, groups flagged
// stuck) come from one snapshot now and then: within FleetVisibleRefresh
// for the sandboxes on screen, within FleetRefresh for the rest, never
// more than fleetParallel at once. A visited sandbox's counts come from
// its live table. A paused or gone sandbox is never asked.

const (
	// FleetVisibleRefresh and FleetRefresh are how old the counts of a
	// sandbox on screen, and of any other, may get before they are asked
	// for again (a little under the 10 s and 60 s promised, for the time
	// an answer takes).
	FleetVisibleRefresh = 8 * time.Second
	FleetRefresh        = 55 * time.Second
	// fleetParallel bounds the summaries in flight (each holds one of the
	// pool's connections while it runs).
	fleetParallel = 32
	// summaryTimeout bounds one summary: dial, describe, snapshot.
	summaryTimeout = 20 * time.Second
	// fleetFirstAt is how many sandboxes with a provider make the TUI open
	// on the fleet view rather than on one sandbox.
	fleetFirstAt = 10
)

// fleetCounts is a sandbox's summary as the fleet view shows it.
type fleetCounts struct {
	Groups, Terminals, Waiting, Stuck int
	// Reason is the first stuck group's reason ("waiting for input", …).
	Reason string
}

// countsOf tallies live groups, terminals, terminals waiting for input and
// groups judged stuck (Group.Stuck, decided by the source).
func countsOf(groups []sandbox.Group, terms []sandbox.Terminal) fleetCounts {
	var c fleetCounts
	for i := range groups {
		g := &groups[i]
		if !g.Live() {
			continue
		}
		c.Groups++
		if g.Stuck != "" {
			c.Stuck++
			if c.Reason == "" {
				c.Reason = g.Stuck
			}
		}
	}
	for _, t := range terms {
		c.Terminals++
		if t.InputWaiting {
			c.Waiting++
		}
	}
	return c
}

// fleetSummary is the last summary of a sandbox not (or not yet) watched.
type fleetSummary struct {
	counts fleetCounts
	known  bool
	err    error
	// throttled: the last failure came while the provider backed off, so
	// it says nothing about the sandbox.
	throttled bool
	at        time.Time // when last asked
	inFlight  bool
}

type summaryMsg struct {
	snap sandbox.Snapshot
	err  error
}

// counts is what the fleet view shows for sb, and whether it knows.
func (sb *sandboxState) counts() (fleetCounts, bool) {
	if sb.watched && sb.conn == connUp {
		return countsOf(sb.tree.groups, sb.terms), true
	}
	return sb.sum.counts, sb.sum.known
}

// countable says whether sb can have counts at all: not paused, not gone,
// and either summarised or watched.
func (sb *sandboxState) countable() bool {
	if sb.spec.Provider != nil && (sb.prov.gone || sb.prov.info.Paused()) {
		return false
	}
	return sb.spec.Summary != nil || sb.state != openFailed
}

// summarised says whether sb's counts come from summaries (it has a
// Summary and is not watched live).
func (sb *sandboxState) summarised() bool {
	return sb.spec.Summary != nil && !(sb.watched && sb.conn == connUp)
}

// onScreen is the set of sandboxes whose rows are on screen: the fleet
// view's window, or the sandbox shown.
func (m *Model) onScreen() map[*sandboxState]bool {
	out := map[*sandboxState]bool{m.cur: true}
	if m.fleet != nil {
		for _, i := range m.fleet.window(m) {
			out[m.sandboxes[i]] = true
		}
	}
	return out
}

// scheduleSummaries asks for the summaries that are due, the ones on
// screen first, then the oldest.
func (m *Model) scheduleSummaries(now time.Time) tea.Cmd {
	var due []*sandboxState
	inFlight := 0
	visible := m.onScreen()
	for _, sb := range m.sandboxes {
		if sb.sum.inFlight {
			inFlight++
			continue
		}
		if !sb.summarised() || !sb.countable() {
			continue
		}
		age := now.Sub(sb.sum.at)
		if sb.sum.at.IsZero() || age >= FleetRefresh || (visible[sb] && age >= FleetVisibleRefresh) {
			due = append(due, sb)
		}
	}
	room := fleetParallel - inFlight
	if room <= 0 || len(due) == 0 {
		return nil
	}
	sort.SliceStable(due, func(i, j int) bool {
		if visible[due[i]] != visible[due[j]] {
			return visible[due[i]]
		}
		return due[i].sum.at.Before(due[j].sum.at)
	})
	var cmds []tea.Cmd
	for _, sb := range due[:min(room, len(due))] {
		sb.sum.inFlight, sb.sum.at = true, now
		summary, ctx := sb.spec.Summary, m.ctx
		cmds = append(cmds, func() tea.Msg {
			c, cancel := context.WithTimeout(ctx, summaryTimeout)
			defer cancel()
			snap, err := summary(c)
			return scopedMsg{sb, summaryMsg{snap: snap, err: err}}
		})
	}
	return tea.Batch(cmds...)
}

// onSummary applies a summary; it reports whether anything the screen
// shows of sb changed (an idle fleet's refreshes mostly change nothing,
// and then the last frame is reused).
func (m *Model) onSummary(sb *sandboxState, msg summaryMsg) (changed bool) {
	sb.sum.inFlight = false
	before := sb.sum
	if msg.err != nil {
		wait, _ := m.planeBackoff()
		sb.sum.err, sb.sum.throttled = msg.err, wait > 0
		return true
	}
	sb.sum.err, sb.sum.throttled = nil, false
	sb.sum.counts, sb.sum.known = countsOf(msg.snap.Groups, msg.snap.Terminals), true
	if before.known && before.err == nil && before.counts == sb.sum.counts {
		return false
	}
	m.noteFleetProgress()
	return true
}

// noteFleetProgress logs, each time it grows, how many sandboxes' counts
// are shown (a benchmark times "every count shown" by it).
func (m *Model) noteFleetProgress() {
	k, n := 0, 0
	for _, sb := range m.sandboxes {
		if !sb.countable() {
			continue
		}
		n++
		if _, ok := sb.counts(); ok {
			k++
		}
	}
	if k > m.fleetShown {
		m.fleetShown = k
		if m.opts.Logger != nil {
			m.opts.Logger.Info("fleet: counts shown for " + strconv.Itoa(k) + " of " + strconv.Itoa(n) + " sandboxes")
		}
	}
}

// planeBackoff is how long the provider still waits and why, when it
// backs off (429, 5xx): every sandbox of one provider shares it.
func (m *Model) planeBackoff() (time.Duration, string) {
	if m.backoffs == nil {
		m.backoffs = backoffSources(m.sandboxes)
	}
	for _, b := range *m.backoffs {
		if wait, why := b.Backoff(); wait > 0 {
			return wait, why
		}
	}
	return 0, ""
}

// backoffSources are the distinct providers that may back off: a thousand
// sandboxes of one team share one, asked once per frame rather than once
// per sandbox. This is found once, and again when sandboxes arrive.
func backoffSources(ctxs []*sandboxState) *[]ProviderBackoff {
	var out []ProviderBackoff
	shared := map[ProviderBackoff]bool{}
	for _, sb := range ctxs {
		b, ok := sb.spec.Provider.(ProviderBackoff)
		if !ok {
			continue
		}
		if s, ok := b.(SharedBackoff); ok {
			b = s.BackoffOwner()
			if shared[b] {
				continue
			}
			shared[b] = true
		}
		out = append(out, b)
	}
	return &out
}
