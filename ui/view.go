package ui

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// View is the frame Bubble Tea draws: the screen, on the alternate screen,
// with the mouse when the operator asked for it.
func (m *Model) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	if m.opts.Mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	return v
}

// screen draws the whole screen. It only renders what is visible, so its
// cost does not grow with the number of groups.
func (m *Model) screen() string {
	if m.width == 0 || m.height == 0 {
		return "sandtop: starting…"
	}
	if m.reuseView {
		m.reuseView = false
		return m.lastView
	}
	screen := m.draw()
	m.lastView, m.lastViewAges = screen, m.visibleAges()
	return screen
}

// draw renders the whole screen.
func (m *Model) draw() string {
	var parts []string
	parts = append(parts, m.viewHeader())
	if m.fleet != nil {
		parts = append(parts, m.viewFleet(m.width, max(m.height-2, 3)), m.fleetFooter())
		screen := strings.Join(parts, "\n")
		if m.dialog != nil {
			if _, inline := m.dialog.(inlineDialog); !inline {
				screen = overlayCenter(screen, m.dialog.view(m, m.width, m.height), m.width, m.height)
			} else {
				screen = strings.Join(append(parts[:len(parts)-1], m.viewFooter()), "\n")
			}
		}
		return screen
	}
	if m.lay.zoomed {
		parts = append(parts, m.viewDetail())
	} else if m.lay.stacked {
		parts = append(parts, m.viewTree(), m.viewTerminals(), m.viewDetail(), m.viewEvents())
	} else {
		left := m.viewTree() + "\n" + m.viewTerminals()
		parts = append(parts, joinH(left, m.viewDetail()), m.viewEvents())
	}
	parts = append(parts, m.viewFooter())
	screen := strings.Join(parts, "\n")
	if m.dialog != nil {
		if _, inline := m.dialog.(inlineDialog); !inline {
			screen = overlayCenter(screen, m.dialog.view(m, m.width, m.height), m.width, m.height)
		}
	}
	return screen
}

func (m *Model) viewHeader() string {
	sb := m.cur
	st := m.st
	sep := st.header.Render("  ")
	conn := st.header.Render("○ connecting")
	switch {
	case sb.state == openPending:
		conn = st.header.Render("○ not connected")
	case sb.state == openFailed:
		conn = st.header.Render("✗ unreachable")
	case sb.conn == connUp:
		conn = st.header.Render("● connected")
	case sb.conn == connLost:
		conn = st.header.Render("✗ disconnected")
	}
	// The sandbox on screen is always named; with several, which of them.
	name := sb.targetName()
	if m.multi() {
		name = fmt.Sprintf("%s (%d/%d, c switches)", name, sb.index+1, len(m.sandboxes))
	}
	parts := []string{st.headerKey.Render(" sandtop"), st.header.Render(name)}
	if m.readOnly(sb) {
		parts = append(parts, st.readOnly.Render(" READ-ONLY "))
	}
	if !sb.providerPaused() { // never dialled while paused: the badge says why
		parts = append(parts, conn)
	}
	if sb.spec.Provider != nil {
		parts = append(parts, m.providerBadge())
	}
	if sb.info.Target != "" {
		parts = append(parts, st.header.Render(sb.info.Target))
	} else if sb.spec.Target != "" {
		parts = append(parts, st.header.Render(sb.spec.Target))
	}
	if sb.info.Version != "" {
		parts = append(parts, st.header.Render("daemon "+sb.info.Version))
	}
	line := strings.Join(parts, sep)
	if caps := m.capabilitiesBadge(m.width - ansi.StringWidth(line) - 2); caps != "" {
		line += sep + caps
	}
	return st.header.Render(fit(line, m.width))
}

// capabilitiesBadge lists the daemon's capabilities in room cells, or
// counts them when the list does not fit (and gives way on a narrow
// screen). Running without the extension (stock envd) is what changes what
// the operator can trust, so it stands out.
func (m *Model) capabilitiesBadge(room int) string {
	caps := m.cur.info.Capabilities
	switch {
	case len(caps) == 0:
		return ""
	case slices.Contains(caps, "compat"):
		return m.st.warning.Render("[compat]")
	}
	if list := "[" + strings.Join(caps, " ") + "]"; ansi.StringWidth(list) <= room {
		return m.st.header.Render(list)
	}
	if count := fmt.Sprintf("[%d capabilities]", len(caps)); ansi.StringWidth(count) <= room {
		return m.st.header.Render(count)
	}
	return ""
}

func (m *Model) viewFooter() string {
	st := m.st
	if d, ok := m.dialog.(inlineDialog); ok {
		return d.view(m, m.width, 1)
	}
	var left string
	if m.focus == focusAttached {
		// The way out is always on screen while attached.
		left = st.detach.Render(" "+m.keys.Detach.Help().Key+" detach ") + " " +
			st.muted.Render(fmt.Sprintf("keys go to terminal %d, Ctrl-C included", m.detail.pid))
		if m.readOnly(m.cur) {
			left += "  " + st.readOnly.Render(" READ-ONLY: input is not sent ")
		}
	}
	if m.status != "" {
		s := m.status
		switch m.statusLevel {
		case levelWarn:
			s = st.warning.Render(s)
		case levelError:
			s = st.danger.Render(s)
		default:
			s = st.accent.Render(s)
		}
		if left != "" {
			return fit(left+"  "+s, m.width)
		}
		return fit(s, m.width)
	}
	if left != "" {
		return fit(left, m.width)
	}
	return m.hints()
}

// hints is the short help for the current focus, from the keymap
// (bubbles/help). Help and quit stay on the right at any width; the other
// hints give way first.
func (m *Model) hints() string {
	k := m.keys
	bs := m.footerBindings()
	h := help.New()
	h.ShortSeparator = "  "
	h.Ellipsis = "…"
	h.Styles.ShortKey, h.Styles.ShortDesc = m.st.keyHint, m.st.keyDesc
	h.Styles.ShortSeparator, h.Styles.Ellipsis = m.st.keyDesc, m.st.keyDesc
	tail := h.ShortHelpView(shortHelp(k.Help, k.Quit)) + " "
	h.SetWidth(max(0, m.width-1-ansi.StringWidth(tail)-2))
	head := " " + h.ShortHelpView(shortHelp(bs...))
	if m.width < ansi.StringWidth(tail) {
		return fit(tail, m.width)
	}
	return fit(head, m.width-ansi.StringWidth(tail)) + tail
}

// shortHelp copies bindings with their descriptions cut to the words before
// any parenthesis, for the footer.
func shortHelp(bs ...key.Binding) []key.Binding {
	out := make([]key.Binding, len(bs))
	for i, b := range bs {
		b.SetHelp(b.Help().Key, shortDesc(b.Help().Desc))
		out[i] = b
	}
	return out
}

func shortDesc(d string) string {
	if i := strings.Index(d, " ("); i > 0 {
		return d[:i]
	}
	return d
}

// overlayCenter draws box over the middle of screen.
func overlayCenter(screen, box string, w, h int) string {
	lines := strings.Split(screen, "\n")
	boxLines := strings.Split(box, "\n")
	bw := 0
	for _, l := range boxLines {
		bw = max(bw, ansi.StringWidth(l))
	}
	x := max(0, (w-bw)/2)
	y := max(0, (h-len(boxLines))/2)
	for i, bl := range boxLines {
		row := y + i
		if row >= len(lines) {
			break
		}
		base := lines[row]
		left := ansi.Truncate(base, x, "")
		if ansi.StringWidth(left) < x {
			left += strings.Repeat(" ", x-ansi.StringWidth(left))
		}
		right := ansi.TruncateLeft(base, x+ansi.StringWidth(bl), "")
		lines[row] = left + "\x1b[0m" + bl + "\x1b[0m" + right
	}
	return strings.Join(lines, "\n")
}
