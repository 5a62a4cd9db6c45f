package vt

// Profile is the colour capability an ANSI rendering targets.
type Profile uint8

const (
	TrueColor Profile = iota // 24-bit colour
	ANSI256                  // xterm 256-colour palette
	ANSI                     // 16 colours
	Ascii                    // no colour; attributes only
)

// xterm's default RGB values for the 16 ANSI colours; used only to pick
// the nearest colour when downgrading (the real colours are the user's).
var ansi16RGB = [16][3]uint8{
	{0, 0, 0}, {205, 0, 0}, {0, 205, 0}, {205, 205, 0}, {0, 0, 238}, {205, 0, 205}, {0, 205, 205}, {229, 229, 229},
	{127, 127, 127}, {255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {92, 92, 255}, {255, 0, 255}, {0, 255, 255}, {255, 255, 255},
}

var cubeLevels = [6]uint8{0, 95, 135, 175, 215, 255}

// paletteRGB returns the xterm RGB value of palette entry i (16..255).
func paletteRGB(i uint8) (r, g, b uint8) {
	if i < 16 {
		c := ansi16RGB[i]
		return c[0], c[1], c[2]
	}
	if i >= 232 {
		v := 8 + 10*(i-232)
		return v, v, v
	}
	i -= 16
	return cubeLevels[i/36], cubeLevels[i/6%6], cubeLevels[i%6]
}

// rgbTo256 picks the nearest entry of the colour cube or grey ramp.
func rgbTo256(r, g, b uint8) uint8 {
	q := func(v uint8) int {
		if v < 48 {
			return 0
		}
		if v < 115 {
			return 1
		}
		return (int(v) - 35) / 40
	}
	ri, gi, bi := q(r), q(g), q(b)
	cube := uint8(16 + 36*ri + 6*gi + bi)
	avg := (int(r) + int(g) + int(b)) / 3
	grey := uint8(232)
	if avg > 238 {
		grey = 255
	} else if avg > 3 {
		grey = uint8(232 + (avg-3)/10)
	}
	cr, cg, cb := paletteRGB(cube)
	gr, _, _ := paletteRGB(grey)
	if dist(r, g, b, gr, gr, gr) < dist(r, g, b, cr, cg, cb) {
		return grey
	}
	return cube
}

func dist(r1, g1, b1, r2, g2, b2 uint8) int {
	dr, dg, db := int(r1)-int(r2), int(g1)-int(g2), int(b1)-int(b2)
	return dr*dr + dg*dg + db*db
}

// rgbTo16 picks the nearest of the 16 ANSI colours.
func rgbTo16(r, g, b uint8) uint8 {
	best, bd := uint8(0), 1<<30
	for i, c := range ansi16RGB {
		if d := dist(r, g, b, c[0], c[1], c[2]); d < bd {
			best, bd = uint8(i), d
		}
	}
	return best
}

// palette256To16 maps palette entries to ANSI colours, computed once.
var palette256To16 = func() (t [256]uint8) {
	for i := range t {
		if i < 16 {
			t[i] = uint8(i)
			continue
		}
		t[i] = rgbTo16(paletteRGB(uint8(i)))
	}
	return
}()

// convert downgrades c to what profile p can show.
func (p Profile) convert(c Color) Color {
	switch p {
	case Ascii:
		return DefaultColor
	case ANSI256:
		if c.Kind() == KindTrueColor {
			return Indexed(rgbTo256(c.RGB()))
		}
	case ANSI:
		switch c.Kind() {
		case KindTrueColor:
			return Indexed(rgbTo16(c.RGB()))
		case KindPalette:
			return Indexed(palette256To16[c.Index()])
		}
	}
	return c
}
