package vt

// Color is a cell colour. The top byte says which kind it is, so the
// default colour, the 256-colour palette and 24-bit colour never collide
// (vt10x stores all three in one integer and they do).
type Color uint32

// ColorKind tells how a Color is to be interpreted.
type ColorKind uint8

const (
	KindDefault   ColorKind = iota // the terminal's default fg or bg
	KindANSI                       // palette index 0..15
	KindPalette                    // palette index 16..255
	KindTrueColor                  // 24-bit RGB
)

const (
	colorIndexed = 1 << 24
	colorRGB     = 2 << 24
)

// DefaultColor is the terminal's default foreground or background.
const DefaultColor Color = 0

// Indexed returns palette colour i (0..15 ANSI, 16..255 xterm palette).
func Indexed(i uint8) Color { return Color(colorIndexed | uint32(i)) }

// RGB returns a 24-bit colour.
func RGB(r, g, b uint8) Color {
	return Color(colorRGB | uint32(r)<<16 | uint32(g)<<8 | uint32(b))
}

// Kind reports the kind of c.
func (c Color) Kind() ColorKind {
	switch c >> 24 {
	case 1:
		if c&0xff < 16 {
			return KindANSI
		}
		return KindPalette
	case 2:
		return KindTrueColor
	}
	return KindDefault
}

// Index returns the palette index of an indexed colour.
func (c Color) Index() uint8 { return uint8(c) }

// RGB returns the components of a true colour. For other kinds it returns
// the raw low bytes, which are meaningless.
func (c Color) RGB() (r, g, b uint8) { return uint8(c >> 16), uint8(c >> 8), uint8(c) }

// Attr is a set of character attributes.
type Attr uint16

const (
	AttrBold Attr = 1 << iota
	AttrFaint
	AttrItalic
	AttrUnderline
	AttrBlink
	AttrReverse
	AttrInvisible
	AttrStrike
	AttrOverline
)

// Style is how a cell is drawn.
type Style struct {
	FG, BG Color
	Attr   Attr
}

// Cell is one character cell of the screen.
type Cell struct {
	// Rune is the character; ' ' for blank cells and 0 for the right half
	// of a wide character.
	Rune rune
	// Width is 1 for ordinary cells, 2 for the left half of a wide
	// character and 0 for its right half.
	Width uint8
	Style
}

// blankCell is what an untouched cell holds.
var blankCell = Cell{Rune: ' ', Width: 1}
