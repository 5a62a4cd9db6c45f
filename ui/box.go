package ui

import (
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// fit pads or cuts s (which may hold ANSI styling) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	if sw > w {
		return ansi.Truncate(s, w, "…")
	}
	return s + strings.Repeat(" ", w-sw)
}

// box draws a rounded frame of exactly w×h cells with a title set into the
// top edge, and content lines fitted inside. Lines past the frame are cut.
func box(st styles, title string, content []string, w, h int, focused bool) string {
	if w < 4 || h < 2 {
		return ""
	}
	bs := st.border
	if focused {
		bs = st.borderFocus
	}
	inner := w - 2
	var b strings.Builder
	b.Grow(w * h * 2)
	t := ""
	if title != "" {
		t = " " + title + " "
		if ansi.StringWidth(t) > inner-1 {
			t = ansi.Truncate(t, inner-1, "…")
		}
	}
	b.WriteString(bs.Render("╭─"))
	b.WriteString(t)
	rest := inner - 1 - ansi.StringWidth(t)
	if rest < 0 {
		rest = 0
	}
	b.WriteString(bs.Render(strings.Repeat("─", rest) + "╮"))
	side := bs.Render("│")
	for i := 0; i < h-2; i++ {
		b.WriteByte('\n')
		line := ""
		if i < len(content) {
			line = content[i]
		}
		b.WriteString(side)
		b.WriteString(fit(line, inner))
		b.WriteString(side)
	}
	b.WriteByte('\n')
	b.WriteString(bs.Render("╰" + strings.Repeat("─", inner) + "╯"))
	return b.String()
}

// joinH places blocks side by side (each already of uniform width).
func joinH(blocks ...string) string {
	return lipgloss.JoinHorizontal(lipgloss.Top, blocks...)
}
