package vt

import "image/color"

// Palette is the set of colours the PNG renderer paints with. The TUI's
// theme can fill one in so screenshots match what users see.
type Palette struct {
	FG, BG     color.RGBA // default foreground and background
	Cursor     color.RGBA // cursor block
	CursorText color.RGBA // character under the cursor
	ANSI       [16]color.RGBA
}

// DefaultPalette is a dark palette close to common terminal defaults.
func DefaultPalette() Palette {
	p := Palette{
		FG:         color.RGBA{0xd0, 0xd0, 0xd0, 0xff},
		BG:         color.RGBA{0x1c, 0x1c, 0x1c, 0xff},
		Cursor:     color.RGBA{0xd0, 0xd0, 0xd0, 0xff},
		CursorText: color.RGBA{0x1c, 0x1c, 0x1c, 0xff},
	}
	hex := [16]uint32{
		0x000000, 0xcd3131, 0x0dbc79, 0xe5e510, 0x2472c8, 0xbc3fbc, 0x11a8cd, 0xe5e5e5,
		0x666666, 0xf14c4c, 0x23d18b, 0xf5f543, 0x3b8eea, 0xd670d6, 0x29b8db, 0xffffff,
	}
	for i, h := range hex {
		p.ANSI[i] = color.RGBA{uint8(h >> 16), uint8(h >> 8), uint8(h), 0xff}
	}
	return p
}

// RGBA resolves c; fg says which default applies.
func (p *Palette) RGBA(c Color, fg bool) color.RGBA {
	switch c.Kind() {
	case KindANSI:
		return p.ANSI[c.Index()]
	case KindPalette:
		r, g, b := paletteRGB(c.Index())
		return color.RGBA{r, g, b, 0xff}
	case KindTrueColor:
		r, g, b := c.RGB()
		return color.RGBA{r, g, b, 0xff}
	}
	if fg {
		return p.FG
	}
	return p.BG
}
