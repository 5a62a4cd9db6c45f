package vt

import (
	"image"
	"image/draw"
	"image/png"
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gomono"
	"golang.org/x/image/font/gofont/gomonobold"
	"golang.org/x/image/font/gofont/gomonobolditalic"
	"golang.org/x/image/font/gofont/gomonoitalic"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// FontSize is the pixel size of the PNG renderer's font.
const FontSize = 14

var (
	fontsOnce sync.Once
	fonts     [4]*opentype.Font // regular, bold, italic, bold italic
	fontsErr  error
)

func loadFonts() error {
	fontsOnce.Do(func() {
		for i, ttf := range [][]byte{gomono.TTF, gomonobold.TTF, gomonoitalic.TTF, gomonobolditalic.TTF} {
			if fonts[i], fontsErr = opentype.Parse(ttf); fontsErr != nil {
				return
			}
		}
	})
	return fontsErr
}

// faceSet holds one renderer's faces; faces are not safe to share
// between goroutines, so each call makes its own.
type faceSet struct {
	faces        [4]font.Face
	cellW, cellH int
	ascent       int
	underlineY   int
	strikeY      int
}

func newFaceSet() (*faceSet, error) {
	if err := loadFonts(); err != nil {
		return nil, err
	}
	fs := &faceSet{}
	for i, f := range fonts {
		face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: FontSize, DPI: 72, Hinting: font.HintingFull})
		if err != nil {
			return nil, err
		}
		fs.faces[i] = face
	}
	m := fs.faces[0].Metrics()
	adv, _ := fs.faces[0].GlyphAdvance('M')
	fs.cellW, fs.cellH, fs.ascent = adv.Ceil(), m.Height.Ceil(), m.Ascent.Ceil()
	fs.underlineY = fs.ascent + 1
	fs.strikeY = fs.ascent - m.XHeight.Ceil()/2
	return fs, nil
}

// CellSize returns the pixel size of one cell in rendered images.
func CellSize() (w, h int, err error) {
	fs, err := newFaceSet()
	if err != nil {
		return 0, 0, err
	}
	return fs.cellW, fs.cellH, nil
}

// RenderImage draws s with Go Mono in the colours of pal. A visible
// cursor is drawn as a block.
func RenderImage(s *Screen, pal Palette) (*image.RGBA, error) {
	fs, err := newFaceSet()
	if err != nil {
		return nil, err
	}
	img := image.NewRGBA(image.Rect(0, 0, s.Cols*fs.cellW, s.Rows*fs.cellH))
	draw.Draw(img, img.Bounds(), image.NewUniform(pal.BG), image.Point{}, draw.Src)
	for y := 0; y < s.Rows; y++ {
		for x := 0; x < s.Cols; x++ {
			c := s.Cells[y*s.Cols+x]
			if c.Width == 0 {
				continue
			}
			cursor := s.Cursor.Visible && s.Cursor.X == x && s.Cursor.Y == y
			fs.drawCell(img, x, y, c, &pal, cursor, s.Modes.ReverseVideo)
		}
	}
	return img, nil
}

func (fs *faceSet) drawCell(img *image.RGBA, x, y int, c Cell, pal *Palette, cursor, reverseScreen bool) {
	fg, bg := pal.RGBA(c.FG, true), pal.RGBA(c.BG, false)
	if c.FG.Kind() == KindANSI && c.Attr&AttrBold != 0 && c.FG.Index() < 8 {
		fg = pal.ANSI[c.FG.Index()+8] // bold brightens the basic colours, as xterm does
	}
	if (c.Attr&AttrReverse != 0) != reverseScreen {
		fg, bg = bg, fg
	}
	if c.Attr&AttrFaint != 0 {
		fg = mix(fg, bg, 160)
	}
	if c.Attr&AttrInvisible != 0 {
		fg = bg
	}
	if cursor {
		fg, bg = pal.CursorText, pal.Cursor
	}
	w := int(c.Width)
	rect := image.Rect(x*fs.cellW, y*fs.cellH, (x+w)*fs.cellW, (y+1)*fs.cellH)
	if bg != pal.BG || cursor {
		draw.Draw(img, rect, image.NewUniform(bg), image.Point{}, draw.Src)
	}
	if c.Rune != ' ' && c.Rune != 0 && !drawSpecial(img, rect, c.Rune, fg, bg) {
		face := 0
		if c.Attr&AttrBold != 0 {
			face |= 1
		}
		if c.Attr&AttrItalic != 0 {
			face |= 2
		}
		d := font.Drawer{Dst: img, Src: image.NewUniform(fg), Face: fs.faces[face],
			Dot: fixed.P(rect.Min.X, rect.Min.Y+fs.ascent)}
		d.DrawString(string(c.Rune))
	}
	line := func(yy int) {
		draw.Draw(img, image.Rect(rect.Min.X, rect.Min.Y+yy, rect.Max.X, rect.Min.Y+yy+1), image.NewUniform(fg), image.Point{}, draw.Src)
	}
	if c.Attr&AttrUnderline != 0 {
		line(fs.underlineY)
	}
	if c.Attr&AttrStrike != 0 {
		line(fs.strikeY)
	}
	if c.Attr&AttrOverline != 0 {
		line(0)
	}
}

// RenderPNG encodes RenderImage(s, pal) as PNG.
func RenderPNG(w io.Writer, s *Screen, pal Palette) error {
	img, err := RenderImage(s, pal)
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}

// ScreenFromANSI lays out a string of ANSI text, such as a Bubble Tea
// View(), on a cols×rows screen. Lines are separated by "\n" and cut to
// cols cells as Bubble Tea does; if there are more lines than rows the
// last rows are kept. The cursor is hidden.
func ScreenFromANSI(s string, cols, rows int) *Screen {
	e := NewVT10x(cols, rows)
	lines := strings.Split(s, "\n")
	if len(lines) > rows {
		lines = lines[len(lines)-rows:]
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > cols {
			l = ansi.Truncate(l, cols, "")
		}
		if i > 0 {
			_, _ = e.Write([]byte("\r\n"))
		}
		_, _ = e.Write([]byte(l))
		_, _ = e.Write([]byte("\x1b[m")) // a line's style must not leak into the next
	}
	scr := Capture(e)
	scr.Cursor.Visible = false
	return scr
}

// ANSIStringImage renders an ANSI string (e.g. a whole TUI frame) to an
// image of cols×rows cells.
func ANSIStringImage(s string, cols, rows int, pal Palette) (*image.RGBA, error) {
	return RenderImage(ScreenFromANSI(s, cols, rows), pal)
}

// RenderANSIStringPNG renders an ANSI string to PNG; see ANSIStringImage.
func RenderANSIStringPNG(w io.Writer, s string, cols, rows int, pal Palette) error {
	img, err := ANSIStringImage(s, cols, rows, pal)
	if err != nil {
		return err
	}
	return png.Encode(w, img)
}
