package ui

import (
	"image/color"

	"sandtop/themes"
	"sandtop/vt"
)

// VTPalette maps a theme onto the vt renderer's palette, so screenshots and
// the terminal pane use the theme's colours.
func VTPalette(t Theme) vt.Palette {
	rgba := func(hex string) color.RGBA {
		r, g, b := themes.RGB(hex)
		return color.RGBA{r, g, b, 0xff}
	}
	p := vt.Palette{
		FG: rgba(t.Palette.Foreground), BG: rgba(t.Palette.Background),
		Cursor: rgba(t.Palette.Cursor), CursorText: rgba(t.Palette.Background),
	}
	for i, c := range t.Palette.ANSI {
		p.ANSI[i] = rgba(c)
	}
	return p
}
