package ui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// The fleet view (c, :ctx): every sandbox on one screen, k9s's sandbox
// list as the model. Each row says where the sandbox is (its state, time
// left, CPU and memory from its provider) and what it runs (its counts,
// see fleet.go), without visiting it. Sortable by the tree's sort keys,
// worst first on request, filtered with /. Enter shows a sandbox; R and E
// act on the one under the cursor, after asking.

// fleetSort is the fleet view's order.
type fleetSort int

const (
	fleetByList fleetSort = iota // the order the sandboxes were listed in
	fleetByName
	fleetByState
	fleetByLeft
	fleetByCPU
	fleetByMem
)

func (s fleetSort) String() string {
	return [...]string{"list", "name", "state", "time left", "cpu", "memory"}[s]
}

type fleetView struct {
	sel     int // the sandbox under the cursor (an index of m.ctxs)
	offset  int // the first row shown
	by      fleetSort
	reverse bool
	worst   bool // worst first: stuck, waiting, unreachable, ending soon
	filter  string
	typing  bool // the filter takes the keys
	height  int  // rows that fit, from the last draw
	// lastKey is what the last box showed (title, size, lines), and lastBox
	// that box drawn.
	lastKey, lastBox string
}

// openContextPicker opens the fleet view on the sandbox shown.
func (m *Model) openContextPicker() {
	if m.fleet == nil {
		m.fleet = &fleetView{sel: m.cur.index}
	}
	m.fleet.sel = m.cur.index
}

// rows are the sandboxes the view lists, filtered and in order.
func (f *fleetView) rows(m *Model) []int {
	now := m.now()
	var out []int
	needle := strings.ToLower(f.filter)
	for i, sb := range m.sandboxes {
		if needle == "" || strings.Contains(strings.ToLower(fleetHaystack(sb)), needle) {
			out = append(out, i)
		}
	}
	less := func(a, b *sandboxState) int {
		switch f.by {
		case fleetByList:
			return cmpInt(a.index, b.index)
		case fleetByName:
			return strings.Compare(a.spec.Name, b.spec.Name)
		case fleetByState:
			return strings.Compare(sb2state(a), sb2state(b))
		case fleetByLeft:
			return cmpDur(a.timeLeft(now), b.timeLeft(now))
		case fleetByCPU:
			return -cmpFloat(a.prov.metrics.CPUPct, b.prov.metrics.CPUPct)
		case fleetByMem:
			return -cmpFloat(float64(a.prov.metrics.MemUsed), float64(b.prov.metrics.MemUsed))
		}
		return 0
	}
	sort.SliceStable(out, func(x, y int) bool {
		a, b := m.sandboxes[out[x]], m.sandboxes[out[y]]
		if f.worst {
			if c := cmpInt(b.badness(now), a.badness(now)); c != 0 {
				return c < 0
			}
		}
		c := less(a, b)
		if c == 0 {
			c = strings.Compare(a.spec.Name, b.spec.Name)
		}
		if f.reverse {
			c = -c
		}
		return c < 0
	})
	return out
}

// window is the part of the rows on screen.
func (f *fleetView) window(m *Model) []int {
	rows := f.rows(m)
	h := max(f.height, 1)
	lo := min(f.offset, max(0, len(rows)-1))
	return rows[lo:min(len(rows), lo+h)]
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpDur(a, b time.Duration) int { return cmpInt(int(a/time.Second), int(b/time.Second)) }

func sb2state(sb *sandboxState) string { return sb.fleetState() }

// badness ranks a sandbox for "worst first": stuck groups weigh most,
// then terminals waiting for input, then being unreachable, then an end
// within two minutes.
func (sb *sandboxState) badness(now time.Time) int {
	c, _ := sb.counts()
	b := c.Stuck*1000 + c.Waiting*100
	if (sb.sum.err != nil && !sb.sum.throttled || sb.state == openFailed) && !sb.providerPaused() {
		b += 50
	}
	if sb.spec.Provider != nil && !sb.prov.info.Paused() && !sb.prov.gone && sb.timeLeft(now) < timeLeftWarning {
		b += 10
	}
	return b
}

// timeLeft is how long a provider's sandbox still runs; a very long time
// for others, so they sort last.
func (sb *sandboxState) timeLeft(now time.Time) time.Duration {
	if sb.spec.Provider == nil || sb.prov.info.EndAt.IsZero() {
		return 1 << 62
	}
	return sb.prov.info.EndAt.Sub(now)
}

// fleetHaystack is what the filter searches: name, template, state and
// metadata.
func fleetHaystack(sb *sandboxState) string {
	p := sb.prov.info
	return strings.Join([]string{sb.spec.Name, p.templateName(), sb.fleetState(), FormatMetadata(p.Metadata), sb.spec.Target}, " ")
}

// fleetState is the STATE column: the provider's state, else how the
// connection is.
func (sb *sandboxState) fleetState() string {
	if sb.spec.Provider != nil {
		switch {
		case sb.prov.gone:
			return "gone"
		case sb.prov.info.Paused():
			return "paused"
		case sb.sum.err != nil && !sb.watched && !sb.sum.throttled:
			return "unreachable"
		}
		return "running"
	}
	switch sb.state {
	case openFailed:
		return "unreachable"
	case openReady:
		return "ready"
	}
	return "connecting"
}

func (m *Model) fleetKey(msg tea.KeyPressMsg) tea.Cmd {
	f := m.fleet
	rows := f.rows(m)
	if f.typing {
		switch {
		case msg.Code == tea.KeyEnter, msg.Code == tea.KeyEscape:
			f.typing = false
			if msg.Code == tea.KeyEscape {
				f.filter = ""
			}
		case msg.Code == tea.KeyBackspace:
			if r := []rune(f.filter); len(r) > 0 {
				f.filter = string(r[:len(r)-1])
			}
		case isText(msg):
			f.filter += msg.Text
		}
		f.offset = 0
		return nil
	}
	pos := -1
	for i, c := range rows {
		if c == f.sel {
			pos = i
		}
	}
	if pos < 0 && len(rows) > 0 {
		// The filter hid the selection: the cursor is on the first row.
		pos, f.sel = 0, rows[0]
	}
	move := func(to int) {
		if len(rows) == 0 {
			return
		}
		to = max(0, min(len(rows)-1, to))
		f.sel = rows[to]
		h := max(f.height, 1)
		if to < f.offset {
			f.offset = to
		} else if to >= f.offset+h {
			f.offset = to - h + 1
		}
	}
	k := m.keys
	sortBy := func(by fleetSort) {
		if f.by == by {
			f.reverse = !f.reverse
		} else {
			f.by, f.reverse = by, false
		}
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Back), key.Matches(msg, k.Sandboxes):
		if f.filter != "" && key.Matches(msg, k.Back) {
			f.filter = ""
			return nil
		}
		m.fleet = nil
	case key.Matches(msg, k.Open):
		if len(rows) == 0 {
			return nil
		}
		m.fleet = nil
		return m.switchTo(f.sel)
	case key.Matches(msg, k.Up):
		move(pos - 1)
	case key.Matches(msg, k.Down):
		move(pos + 1)
	case key.Matches(msg, k.PageUp):
		move(pos - max(f.height-1, 1))
	case key.Matches(msg, k.PageDown):
		move(pos + max(f.height-1, 1))
	case key.Matches(msg, k.Top):
		move(0)
	case key.Matches(msg, k.Bottom):
		move(len(rows) - 1)
	case key.Matches(msg, k.Filter):
		f.typing = true
	case key.Matches(msg, k.Worst):
		f.worst = !f.worst
		f.offset = 0
	case key.Matches(msg, k.SortPGID):
		sortBy(fleetByName)
	case key.Matches(msg, k.SortState):
		sortBy(fleetByState)
	case key.Matches(msg, k.SortAge):
		sortBy(fleetByLeft)
	case key.Matches(msg, k.SortCPU):
		sortBy(fleetByCPU)
	case key.Matches(msg, k.SortRSS):
		sortBy(fleetByMem)
	case key.Matches(msg, k.Resume):
		return m.askProvider(m.sandboxes[f.sel], "resume", 0)
	case key.Matches(msg, k.Extend):
		return m.askProvider(m.sandboxes[f.sel], "extend", 0)
	case len(msg.String()) == 1 && msg.String()[0] >= '1' && msg.String()[0] <= '9' && int(msg.String()[0]-'1') < len(m.sandboxes):
		// 1-9 pick a sandbox by its number, as :ctx N does.
		f.sel = int(msg.String()[0] - '1')
	case key.Matches(msg, k.Palette):
		cmd, _ := m.dispatch(msg)
		return cmd
	case key.Matches(msg, k.Help):
		cmd, _ := m.dispatch(msg)
		return cmd
	}
	return nil
}

// viewFleet draws the fleet view in w×h cells.
func (m *Model) viewFleet(w, h int) string {
	st, f, now := m.st, m.fleet, m.now()
	rows := f.rows(m)
	f.height = max(h-3, 1) // frame and column head
	if f.offset > max(0, len(rows)-f.height) {
		f.offset = max(0, len(rows)-f.height)
	}
	// Columns: the name takes what the numbers leave.
	const fixed = 2 + 53 // the cursor, then STATE LEFT CPU MEM GROUPS TERM WAIT STUCK and their gaps
	reasonW := 0
	if w >= 110 {
		reasonW = min(60, w-2-fixed-1-28)
	}
	nameW := w - 2 - fixed - 1
	if reasonW > 0 {
		nameW -= reasonW + 1
	}
	nameW = max(8, min(30, nameW))
	head := fmt.Sprintf("  %-*s %-11s %7s %4s %5s %5s %4s %4s %5s", nameW, "NAME", "STATE", "LEFT", "CPU", "MEM", "GROUPS", "TERM", "WAIT", "STUCK")
	if reasonW > 0 {
		head += " REASON"
	}
	lines := []string{st.muted.Render(fit(head, w-2))}
	known := 0
	countable := 0
	for _, sb := range m.sandboxes {
		if sb.countable() {
			countable++
			if _, ok := sb.counts(); ok {
				known++
			}
		}
	}
	lo := min(f.offset, len(rows))
	for _, i := range rows[lo:min(len(rows), lo+f.height)] {
		sb := m.sandboxes[i]
		lines = append(lines, m.fleetRow(sb, i == f.sel, nameW, reasonW, w-2, now))
	}
	if len(rows) == 0 {
		lines = append(lines, st.muted.Render("  no sandbox matches the filter"))
	}
	title := fmt.Sprintf("Sandboxes %d", len(m.sandboxes))
	if len(rows) != len(m.sandboxes) {
		title = fmt.Sprintf("Sandboxes %d of %d", len(rows), len(m.sandboxes))
	}
	title += fmt.Sprintf(" · counts %d/%d · by %s", known, countable, f.by)
	if f.reverse {
		title += " ↓"
	}
	if f.worst {
		title += " · worst first"
	}
	if f.typing || f.filter != "" {
		title += " · filter " + f.filter
		if f.typing {
			title += "▏"
		}
	}
	if wait, why := m.planeBackoff(); wait > 0 {
		title += " · " + st.warning.Render(fmt.Sprintf("E2B backing off (%s), %s", why, wait.Round(time.Second)))
	}
	// The header's clock redraws the screen every second; the fleet's box
	// is drawn again only when a line of it changed.
	key := title + "\x00" + strconv.Itoa(w) + "x" + strconv.Itoa(h) + "\x00" + strings.Join(lines, "\n")
	if key != f.lastKey {
		f.lastKey, f.lastBox = key, box(st, title, lines, w, h, true)
	}
	return f.lastBox
}

// fleetRow is one sandbox's row.
func (m *Model) fleetRow(sb *sandboxState, selected bool, nameW, reasonW, w int, now time.Time) string {
	st, p := m.st, &sb.prov
	name := sb.spec.Name
	if sb == m.cur {
		name = "*" + name
	}
	left, cpu, mem := "-", "-", "-"
	if sb.spec.Provider != nil && !p.gone {
		if p.info.Paused() {
			left = "paused"
		} else if !p.info.EndAt.IsZero() {
			left = fleetTimeLeft(p.info.EndAt.Sub(now))
		}
		if p.hasMetrics && !p.info.Paused() {
			cpu = fmt.Sprintf("%.0f%%", p.metrics.CPUPct)
			mem = formatBytes(uint64(max(p.metrics.MemUsed, 0)))
		}
	}
	groups, terms, waiting, stuck, reason := "-", "-", "-", "-", ""
	if c, ok := sb.counts(); ok {
		groups, terms, waiting, stuck, reason = strconv.Itoa(c.Groups), strconv.Itoa(c.Terminals), strconv.Itoa(c.Waiting), strconv.Itoa(c.Stuck), c.Reason
	} else if sb.sum.inFlight {
		groups = "…"
	}
	if sb.sum.err != nil && sb.sum.throttled && !(sb.watched && sb.conn == connUp) {
		reason = "waits for the control plane"
	} else if sb.sum.err != nil && !(sb.watched && sb.conn == connUp) {
		reason = "unreachable: " + errText(sb.sum.err)
	} else if sb.state == openFailed && sb.spec.Summary == nil {
		reason = "unreachable: " + errText(sb.openErr)
	}
	if sb.providerPaused() {
		// Not dialled while paused: a failure from before the pause, or
		// from a dial the pause raced, is not the sandbox being unreachable.
		reason = "paused: R resumes it"
	}
	c, _ := sb.counts()
	look := rowPlain
	switch {
	case selected:
		look = rowSelected
	case c.Stuck > 0 || sb.sum.err != nil && !sb.providerPaused():
		look = rowDanger
	case p.gone:
		look = rowMuted
	case c.Waiting > 0 || sb.spec.Provider != nil && p.info.Paused():
		look = rowWarning
	case sb.spec.Provider != nil && !p.info.EndAt.IsZero() && p.info.EndAt.Sub(now) < timeLeftWarning:
		look = rowWarning
	}
	// Measuring, fitting and styling are most of a row's cost, and an idle
	// fleet's rows rarely change between frames: the last row is kept
	// while what it shows is the same.
	key := strings.Join([]string{name, sb.fleetState(), left, cpu, mem, groups, terms, waiting, stuck, reason,
		strconv.Itoa(nameW), strconv.Itoa(reasonW), strconv.Itoa(w)}, "\x00")
	if rc := &sb.fleetRow; rc.look == look && rc.key == key && rc.styled != "" {
		return rc.styled
	}
	l := fmt.Sprintf("%s %-*s %-11s %7s %4s %5s %5s %4s %4s %5s", " ", nameW, fit(name, nameW), fit(sb.fleetState(), 11), left, cpu, mem, groups, terms, waiting, stuck)
	if reasonW > 0 && reason != "" {
		l += " " + fit(reason, reasonW)
	}
	l = fit(l, w)
	var style lipgloss.Style
	switch look {
	case rowPlain:
		sb.fleetRow = styledRow{look: look, key: key, styled: l}
		return l
	case rowSelected:
		style, l = st.selected, "▸"+l[1:]
	case rowDanger:
		style = st.danger
	case rowMuted:
		style = st.muted
	case rowWarning:
		style = st.warning
	}
	out := style.Render(l)
	sb.fleetRow = styledRow{look: look, key: key, styled: out}
	return out
}

// rowLook is which style a fleet row takes.
type rowLook int

const (
	rowPlain rowLook = iota
	rowSelected
	rowDanger
	rowMuted
	rowWarning
)

// styledRow is a sandbox's last fleet row: what it showed (key, look) and
// the row drawn.
type styledRow struct {
	look        rowLook
	key, styled string
}

// fleetFooter is the fleet view's key hints (or the status).
func (m *Model) fleetFooter() string {
	k := m.keyOf
	hints := k(m.keys.Open) + " show · " + k(m.keys.Filter) + " filter · " + k(m.keys.SortPGID) + "/" + k(m.keys.SortState) + "/" +
		k(m.keys.SortAge) + "/" + k(m.keys.SortCPU) + "/" + k(m.keys.SortRSS) + " sort name/state/left/cpu/mem · " + k(m.keys.Worst) + " worst first · " +
		k(m.keys.Resume) + " resume · " + k(m.keys.Extend) + " extend · " + k(m.keys.Back) + " back · " + k(m.keys.Quit) + " quit"
	if m.status != "" {
		return fit(m.status, m.width)
	}
	return m.st.muted.Render(fit(" "+hints, m.width))
}
