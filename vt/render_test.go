package vt

import (
	"bytes"
	"flag"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtureInput exercises every kind of colour, each attribute, wide
// characters, line drawing and a cursor in the middle of the screen.
const fixtureInput = "\x1b[1;31mbold red\x1b[0m \x1b[3;4mitalic underline\x1b[0m \x1b[7mreverse\x1b[0m\r\n" +
	"\x1b[38;5;208m256 orange\x1b[0m \x1b[48;2;10;40;90m truecolour bg \x1b[0m \x1b[2mfaint\x1b[0m \x1b[9mstrike\x1b[0m\r\n" +
	"\x1b(0lqqqqk\x1b(B wide: 日本語 \x1b[38;2;255;200;0m★\x1b[0m\r\n" +
	"\x1b(0x\x1b(B ok \x1b(0x\x1b(B \x1b[92;104mbright\x1b[0m \x1b[1;4;38;2;1;2;3;48;5;250mmixed\x1b[0m\r\n" +
	"\x1b(0mqqqqj\x1b(B \x1b[5mblink\x1b[0m \x1b[8mhidden\x1b[0m \x1b[53moverline\x1b[0m\r\n" +
	"prompt$ \x1b[42m \x1b[0m"

func fixtureScreen(t testing.TB) *Screen {
	t.Helper()
	e := NewVT10x(60, 8)
	if _, err := e.Write([]byte(fixtureInput)); err != nil {
		t.Fatal(err)
	}
	_, _ = e.Write([]byte("\x1b[6;9H"))
	return Capture(e)
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./vt -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from golden:\ngot:  %q\nwant: %q", name, got, want)
	}
}

func TestRenderANSIGolden(t *testing.T) {
	scr := fixtureScreen(t)
	profiles := map[string]Profile{"truecolor": TrueColor, "ansi256": ANSI256, "ansi": ANSI, "ascii": Ascii}
	sizes := [][2]int{{60, 8}, {30, 4}, {72, 10}} // exact, cropped, padded
	for pname, prof := range profiles {
		for _, sz := range sizes {
			name := fmt.Sprintf("ansi_%s_%dx%d.golden", pname, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				out := RenderANSI(scr, ANSIOptions{Width: sz[0], Height: sz[1], Profile: prof, Cursor: true})
				lines := strings.Split(out, "\n")
				if len(lines) != sz[1] {
					t.Fatalf("%d lines, want %d", len(lines), sz[1])
				}
				for i, l := range lines {
					if w := lipgloss.Width(l); w != sz[0] {
						t.Errorf("line %d has width %d, want %d: %q", i, w, sz[0], l)
					}
					if k := strings.LastIndex(l, "\x1b["); k >= 0 && !strings.HasPrefix(l[k:], "\x1b[m") {
						t.Errorf("line %d leaves a style set at its end: %q", i, l)
					}
				}
				golden(t, name, []byte(out))
			})
		}
	}
}

// The renderer must round-trip: feeding its output to an emulator gives
// back the same cells (true colour, cursor not drawn).
func TestRenderANSIRoundTrip(t *testing.T) {
	scr := fixtureScreen(t)
	out := RenderANSI(scr, ANSIOptions{})
	back := NewVT10x(scr.Cols, scr.Rows)
	_, _ = back.Write([]byte(strings.ReplaceAll(out, "\n", "\r\n")))
	got := Capture(back)
	for y := 0; y < scr.Rows; y++ {
		for x := 0; x < scr.Cols; x++ {
			if a, b := scr.Cell(x, y), got.Cell(x, y); a != b {
				t.Fatalf("cell %d,%d: %+v after round trip, want %+v", x, y, b, a)
			}
		}
	}
}

func TestRenderANSIMinimalSGR(t *testing.T) {
	scr := NewScreen(6, 1)
	for x := 0; x < 6; x++ {
		scr.Cells[x] = Cell{Rune: 'a' + rune(x), Width: 1, Style: Style{FG: Indexed(1)}}
	}
	scr.Cells[3].Attr = AttrBold
	scr.Cells[4].Style = Style{FG: Indexed(1), BG: Indexed(2), Attr: AttrBold}
	got := RenderANSI(scr, ANSIOptions{})
	want := "\x1b[31mabc\x1b[1md\x1b[42me\x1b[0;31mf\x1b[m"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRenderPNGGolden(t *testing.T) {
	scr := fixtureScreen(t)
	var buf bytes.Buffer
	if err := RenderPNG(&buf, scr, DefaultPalette()); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "screen.png")
	if *update {
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	got, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if bad, total := pixelDiff(got, want, 24); bad*200 > total {
		t.Errorf("%d of %d pixels differ from %s", bad, total, path)
	}
}

// pixelDiff counts pixels whose channels differ by more than tol; a size
// mismatch counts every pixel.
func pixelDiff(a, b image.Image, tol int) (bad, total int) {
	r := a.Bounds()
	total = r.Dx() * r.Dy()
	if r != b.Bounds() {
		return total, total
	}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			r1, g1, b1, _ := a.At(x, y).RGBA()
			r2, g2, b2, _ := b.At(x, y).RGBA()
			d := func(p, q uint32) int { return abs(int(p>>8) - int(q>>8)) }
			if d(r1, r2) > tol || d(g1, g2) > tol || d(b1, b2) > tol {
				bad++
			}
		}
	}
	return bad, total
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// The PNG must actually show the screen: the cursor cell is painted in
// the cursor colour, a red cell's glyph uses red, the rest is background.
func TestRenderImagePixels(t *testing.T) {
	pal := DefaultPalette()
	scr := fixtureScreen(t)
	img, err := RenderImage(scr, pal)
	if err != nil {
		t.Fatal(err)
	}
	cw, ch, _ := CellSize()
	if img.Bounds().Dx() != 60*cw || img.Bounds().Dy() != 8*ch {
		t.Fatalf("image is %v, want %dx%d cells of %dx%d", img.Bounds(), 60, 8, cw, ch)
	}
	if c := img.RGBAAt(8*cw+1, 5*ch+1); c != pal.Cursor {
		t.Errorf("cursor cell pixel = %v, want %v", c, pal.Cursor)
	}
	if c := img.RGBAAt(59*cw+1, 7*ch+1); c != pal.BG {
		t.Errorf("empty cell pixel = %v, want %v", c, pal.BG)
	}
	red := 0
	for y := 0; y < ch; y++ {
		for x := 0; x < cw; x++ {
			if img.RGBAAt(x, y) == pal.ANSI[9] { // bold red is drawn bright
				red++
			}
		}
	}
	if red == 0 {
		t.Error("the bold red 'b' has no red pixels")
	}
}

func TestScreenFromANSI(t *testing.T) {
	view := "\x1b[1mtitle\x1b[0m\nline two is much too long for the screen\nthird"
	scr := ScreenFromANSI(view, 12, 3)
	want := []string{"title", "line two is", "third"}
	for y, w := range want {
		if got := scr.Line(y); got != w {
			t.Errorf("line %d = %q, want %q", y, got, w)
		}
	}
	if scr.Cell(0, 0).Attr != AttrBold || scr.Cell(0, 1).Attr != 0 {
		t.Errorf("styles: %+v %+v", scr.Cell(0, 0), scr.Cell(0, 1))
	}
	if scr.Cursor.Visible {
		t.Error("cursor should be hidden in a rendered frame")
	}
}
