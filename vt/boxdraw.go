package vt

import (
	"image"
	"image/color"
	"image/draw"
)

// Go Mono lacks rounded corners, and font glyphs rarely meet at cell
// edges, so box-drawing and block characters (what lipgloss borders and
// progress bars use) are drawn as rectangles instead.

// arms of a box-drawing character: 0 none, 1 light, 2 heavy, 3 double.
type arms struct{ up, down, left, right uint8 }

var boxArms = map[rune]arms{
	'─': {0, 0, 1, 1}, '━': {0, 0, 2, 2}, '│': {1, 1, 0, 0}, '┃': {2, 2, 0, 0},
	'┄': {0, 0, 1, 1}, '┅': {0, 0, 2, 2}, '┆': {1, 1, 0, 0}, '┇': {2, 2, 0, 0},
	'┈': {0, 0, 1, 1}, '┉': {0, 0, 2, 2}, '┊': {1, 1, 0, 0}, '┋': {2, 2, 0, 0},
	'╌': {0, 0, 1, 1}, '╍': {0, 0, 2, 2}, '╎': {1, 1, 0, 0}, '╏': {2, 2, 0, 0},
	'┌': {0, 1, 0, 1}, '┐': {0, 1, 1, 0}, '└': {1, 0, 0, 1}, '┘': {1, 0, 1, 0},
	'╭': {0, 1, 0, 1}, '╮': {0, 1, 1, 0}, '╰': {1, 0, 0, 1}, '╯': {1, 0, 1, 0},
	'┏': {0, 2, 0, 2}, '┓': {0, 2, 2, 0}, '┗': {2, 0, 0, 2}, '┛': {2, 0, 2, 0},
	'├': {1, 1, 0, 1}, '┤': {1, 1, 1, 0}, '┬': {0, 1, 1, 1}, '┴': {1, 0, 1, 1}, '┼': {1, 1, 1, 1},
	'┣': {2, 2, 0, 2}, '┫': {2, 2, 2, 0}, '┳': {0, 2, 2, 2}, '┻': {2, 0, 2, 2}, '╋': {2, 2, 2, 2},
	'═': {0, 0, 3, 3}, '║': {3, 3, 0, 0}, '╔': {0, 3, 0, 3}, '╗': {0, 3, 3, 0}, '╚': {3, 0, 0, 3},
	'╝': {3, 0, 3, 0}, '╠': {3, 3, 0, 3}, '╣': {3, 3, 3, 0}, '╦': {0, 3, 3, 3}, '╩': {3, 0, 3, 3}, '╬': {3, 3, 3, 3},
	'╴': {0, 0, 1, 0}, '╵': {1, 0, 0, 0}, '╶': {0, 0, 0, 1}, '╷': {0, 1, 0, 0},
}

// drawSpecial draws r into cell rect c if it is a box-drawing or block
// character, and reports whether it did.
func drawSpecial(img *image.RGBA, c image.Rectangle, r rune, fg, bg color.RGBA) bool {
	if a, ok := boxArms[r]; ok {
		drawArms(img, c, a, fg)
		return true
	}
	w, h := c.Dx(), c.Dy()
	fill := func(x0, y0, x1, y1 int, col color.Color) {
		draw.Draw(img, image.Rect(c.Min.X+x0, c.Min.Y+y0, c.Min.X+x1, c.Min.Y+y1), image.NewUniform(col), image.Point{}, draw.Src)
	}
	switch {
	case r == '█':
		fill(0, 0, w, h, fg)
	case r == '▀':
		fill(0, 0, w, h/2, fg)
	case r == '▌':
		fill(0, 0, w/2, h, fg)
	case r == '▐':
		fill(w/2, 0, w, h, fg)
	case r >= '▁' && r <= '▇': // lower n/8
		n := int(r-'▁') + 1
		fill(0, h-h*n/8, w, h, fg)
	case r == '▄':
		fill(0, h-h/2, w, h, fg)
	case r >= '▉' && r <= '▏': // left 7/8 .. 1/8
		n := 7 - int(r-'▉')
		fill(0, 0, w*n/8, h, fg)
	case r >= '░' && r <= '▓':
		k := uint32(r-'░'+1) * 64 // 25%, 50%, 75%
		fill(0, 0, w, h, mix(fg, bg, k))
	default:
		return false
	}
	return true
}

// drawArms draws the lines of a box-drawing character from the centre.
func drawArms(img *image.RGBA, c image.Rectangle, a arms, fg color.RGBA) {
	u := image.NewUniform(fg)
	cx, cy := c.Min.X+c.Dx()/2, c.Min.Y+c.Dy()/2
	rect := func(x0, y0, x1, y1 int) {
		draw.Draw(img, image.Rect(x0, y0, x1, y1).Intersect(c), u, image.Point{}, draw.Src)
	}
	// Each arm is drawn as strokes at offsets from the centre line.
	strokes := func(w uint8) []int {
		switch w {
		case 1:
			return []int{0}
		case 2:
			return []int{-1, 0, 1}
		case 3:
			return []int{-1, 1}
		}
		return nil
	}
	for _, d := range strokes(a.up) {
		rect(cx+d, c.Min.Y, cx+d+1, cy+1)
	}
	for _, d := range strokes(a.down) {
		rect(cx+d, cy, cx+d+1, c.Max.Y)
	}
	for _, d := range strokes(a.left) {
		rect(c.Min.X, cy+d, cx+1, cy+d+1)
	}
	for _, d := range strokes(a.right) {
		rect(cx, cy+d, c.Max.X, cy+d+1)
	}
}

// mix blends fg over bg with weight k/256.
func mix(fg, bg color.RGBA, k uint32) color.RGBA {
	m := func(a, b uint8) uint8 { return uint8((uint32(a)*k + uint32(b)*(256-k)) / 256) }
	return color.RGBA{m(fg.R, bg.R), m(fg.G, bg.G), m(fg.B, bg.B), 0xff}
}
