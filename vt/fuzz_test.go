package vt

import (
	"bytes"
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
	"github.com/hinshun/vt10x"
)

// FuzzEmulatorWrite feeds arbitrary bytes, split at an arbitrary point,
// with an arbitrary resize in between. The adapter must not panic (nor
// need to recover from a vt10x panic), must report full writes, keep the
// cursor on the screen, render lines of exact width, and give the same
// screen as one unsplit write when no resize happens.
func FuzzEmulatorWrite(f *testing.F) {
	for _, tc := range conformance {
		var b []byte
		for _, s := range tc.in {
			if s, ok := s.(string); ok {
				b = append(b, s...)
			}
		}
		f.Add(b, uint16(len(b)/2), uint8(0), uint8(0))
		f.Add(b, uint16(1), uint8(3), uint8(2))
	}
	f.Add([]byte(fixtureInput), uint16(100), uint8(13), uint8(4))
	f.Fuzz(func(t *testing.T, data []byte, split uint16, cols, rows uint8) {
		cut := min(int(split), len(data))
		one := NewVT10x(20, 6)
		if n, err := one.Write(data); n != len(data) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
		two := NewVT10x(20, 6)
		_, _ = two.Write(data[:cut])
		if cols > 0 && rows > 0 {
			two.Resize(int(cols%100)+1, int(rows%50)+1)
		}
		_, _ = two.Write(data[cut:])
		for _, e := range []*VT10x{one, two} {
			if e.Recovered() != 0 {
				t.Fatalf("recovered from a panic on %q", data)
			}
			scr := Capture(e)
			if c := scr.Cursor; c.X < 0 || c.Y < 0 || c.X >= scr.Cols || c.Y >= scr.Rows {
				t.Fatalf("cursor %+v outside %dx%d", c, scr.Cols, scr.Rows)
			}
			for i, l := range strings.Split(RenderANSI(scr, ANSIOptions{Cursor: true}), "\n") {
				if w := lipgloss.Width(l); w != scr.Cols {
					t.Fatalf("line %d width %d, want %d: %q", i, w, scr.Cols, l)
				}
			}
		}
		if cols == 0 || rows == 0 {
			a, b := Capture(one), Capture(two)
			if !a.Equal(b) {
				t.Fatalf("split at %d changes the screen:\n%s\nvs\n%s", cut, a.Text(), b.Text())
			}
		}
	})
}

// panicky is a vt10x terminal that panics on Write, to check recovery.
type panicky struct{ vt10x.Terminal }

func (panicky) Write([]byte) (int, error) { panic("boom") }

func TestRecoverFromVT10xPanic(t *testing.T) {
	e := NewVT10x(10, 3)
	_, _ = e.Write([]byte("\x1b]2;kept\x07hello"))
	e.term = panicky{e.term}
	if n, err := e.Write([]byte("more")); n != 4 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if e.Recovered() != 1 {
		t.Fatalf("Recovered = %d", e.Recovered())
	}
	_, _ = e.Write([]byte("\x1b[31mfresh"))
	scr := Capture(e)
	if scr.Line(0) != "fresh" || scr.Cell(0, 0).FG != Indexed(1) || scr.Title != "kept" {
		t.Fatalf("after recovery: %q %+v title %q", scr.Line(0), scr.Cell(0, 0), scr.Title)
	}
}

// Style ids are recycled when the table is full, without changing what
// any visible or hidden cell shows.
func TestStyleTableCollects(t *testing.T) {
	e := NewVT10x(8, 2)
	e.styleLimit = 40
	e.styles = newStyleTable(40)
	_, _ = e.Write([]byte("\x1b[38;2;9;9;9mmain\x1b[0m\x1b[?1049h\x1b[H"))
	var last bytes.Buffer
	for i := 0; i < 2000; i++ {
		last.Reset()
		for k := 0; k < 16; k++ {
			v := (i*16 + k) % 250
			last.WriteString("\x1b[38;2;1;2;" + itoa(v) + "m" + "x")
		}
		_, _ = e.Write(last.Bytes())
	}
	scr := Capture(e)
	for k := 0; k < 16; k++ {
		want := RGB(1, 2, uint8((1999*16+k)%250))
		if c := scr.Cell(k%8, k/8); c.FG != want {
			t.Fatalf("cell %d fg %08x, want %08x", k, uint32(c.FG), uint32(want))
		}
	}
	if n := e.styles.size(); n > e.styles.limit {
		t.Fatalf("style table has %d entries, limit %d", n, e.styles.limit)
	}
	_, _ = e.Write([]byte("\x1b[?1049l"))
	if c := Capture(e).Cell(0, 0); c.Rune != 'm' || c.FG != RGB(9, 9, 9) {
		t.Fatalf("hidden main screen lost its colour: %+v", c)
	}
}

func itoa(v int) string { return string(appendInt(nil, v)) }

func appendInt(b []byte, v int) []byte {
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}
