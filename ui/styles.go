package ui

import (
	"charm.land/lipgloss/v2"

	"sandtop/themes"
)

// Theme is the colour theme the UI draws with.
type Theme = themes.Theme

// styles are the lipgloss styles derived from one theme.
type styles struct {
	text, muted, accent, match      lipgloss.Style
	border, borderFocus, title      lipgloss.Style
	selected, selectedDim           lipgloss.Style
	header, headerKey, readOnly     lipgloss.Style
	running, stopped, exited        lipgloss.Style
	settled, warning, danger, ok    lipgloss.Style
	managed, agent, foreign, marked lipgloss.Style
	keyHint, keyDesc                lipgloss.Style
	dialog, dialogTitle, button     lipgloss.Style
	buttonActive, detach            lipgloss.Style
}

func newStyles(t Theme) styles {
	// Colours are given as the theme's hex; Bubble Tea fits them to the
	// terminal's colour profile when it draws the frame.
	c := lipgloss.Color
	u := t.UI
	fg := func(hex string) lipgloss.Style { return lipgloss.NewStyle().Foreground(c(hex)) }
	return styles{
		text:         fg(u.Text),
		muted:        fg(u.Muted),
		accent:       fg(u.Accent).Bold(true),
		match:        lipgloss.NewStyle().Foreground(c(t.Palette.Background)).Background(c(u.Match)),
		border:       fg(u.Border),
		borderFocus:  fg(u.BorderFocus),
		title:        fg(u.Text).Bold(true),
		selected:     lipgloss.NewStyle().Foreground(c(u.SelectionFg)).Background(c(u.SelectionBg)).Bold(true),
		selectedDim:  lipgloss.NewStyle().Background(c(u.SelectionBg)),
		header:       lipgloss.NewStyle().Foreground(c(u.HeaderFg)).Background(c(u.HeaderBg)),
		headerKey:    lipgloss.NewStyle().Foreground(c(u.Accent)).Background(c(u.HeaderBg)).Bold(true),
		readOnly:     lipgloss.NewStyle().Foreground(c(t.Palette.Background)).Background(c(u.Warning)).Bold(true),
		running:      fg(u.Running),
		stopped:      fg(u.Stopped),
		exited:       fg(u.Exited),
		settled:      fg(u.Settled),
		warning:      fg(u.Warning).Bold(true),
		danger:       fg(u.Danger).Bold(true),
		ok:           fg(u.OK),
		managed:      fg(u.Managed),
		agent:        fg(u.Agent),
		foreign:      fg(u.Foreign),
		marked:       fg(u.Warning).Bold(true),
		keyHint:      fg(u.Accent).Bold(true),
		keyDesc:      fg(u.Muted),
		dialog:       lipgloss.NewStyle().Foreground(c(u.Text)),
		dialogTitle:  fg(u.Accent).Bold(true),
		button:       fg(u.Muted),
		buttonActive: lipgloss.NewStyle().Foreground(c(u.SelectionFg)).Background(c(u.SelectionBg)).Bold(true),
		detach:       lipgloss.NewStyle().Foreground(c(t.Palette.Background)).Background(c(u.Accent)).Bold(true),
	}
}
