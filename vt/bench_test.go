package vt

import (
	"io"
	"runtime"
	"testing"
	"time"
)

func benchParse(b *testing.B, data []byte, cols, rows int, mk func(c, r int) io.Writer) {
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		e := mk(cols, rows)
		for off := 0; off < len(data); off += 4096 {
			_, _ = e.Write(data[off:min(off+4096, len(data))])
		}
	}
}

func BenchmarkParseLog(b *testing.B) {
	data := logCorpus(4<<20, 1)
	benchParse(b, data, 120, 40, func(c, r int) io.Writer { return NewVT10x(c, r) })
}

// The same corpus through bare vt10x, to show what the adapter costs.
func BenchmarkParseLogBareVT10x(b *testing.B) {
	data := logCorpus(4<<20, 1)
	benchParse(b, data, 120, 40, func(c, r int) io.Writer { return newRawVT10x(c, r) })
}

func BenchmarkParseSessions(b *testing.B) {
	var data []byte
	for _, n := range []string{"top", "vim"} {
		data = append(data, loadRecording(b, n).raw...)
	}
	benchParse(b, data, 80, 24, func(c, r int) io.Writer { return NewVT10x(c, r) })
}

func fullScreen(b *testing.B, cols, rows int) *Screen {
	e := NewVT10x(cols, rows)
	_, _ = e.Write(logCorpus(cols*rows*4, 3))
	return Capture(e)
}

func BenchmarkCapture120x40(b *testing.B) {
	e := NewVT10x(120, 40)
	_, _ = e.Write(logCorpus(120*40*4, 3))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = Capture(e)
	}
}

func benchRender(b *testing.B, cols, rows int) {
	scr := fullScreen(b, cols, rows)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = RenderANSI(scr, ANSIOptions{Cursor: true})
	}
}

func BenchmarkRenderANSI120x40(b *testing.B) { benchRender(b, 120, 40) }
func BenchmarkRenderANSI240x67(b *testing.B) { benchRender(b, 240, 67) }

func BenchmarkRenderPNG120x40(b *testing.B) {
	scr := fullScreen(b, 120, 40)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := RenderImage(scr, DefaultPalette()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFlood writes 100 MiB of coloured log into a Term as fast as
// possible and reports how long after the last byte the screen is final
// (ms-to-final) and the peak heap seen meanwhile (heap-MiB).
func BenchmarkFlood(b *testing.B) {
	const total = 100 << 20
	corpus := logCorpus(1<<20, 5)
	tail := []byte("\x1b[1;32mdone\x1b[0m\r\n")
	want := screenOf(append(append([]byte{}, corpus...), tail...), 120, 40)
	b.SetBytes(total)
	var lat time.Duration
	var peak uint64
	for i := 0; i < b.N; i++ {
		term := NewTerm(120, 40, TermOptions{})
		var ms runtime.MemStats
		for sent := 0; sent < total; sent += len(corpus) {
			for off := 0; off < len(corpus); off += 64 << 10 {
				_, _ = term.Write(corpus[off:min(off+64<<10, len(corpus))])
			}
			if sent%(16<<20) == 0 {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
		}
		_, _ = term.Write(tail)
		t0 := time.Now()
		for {
			st := term.Stats()
			if st.Parsed == st.Written && term.Snapshot().Equal(want) {
				break
			}
			if time.Since(t0) > 10*time.Second {
				b.Fatal("flood never reached the final screen")
			}
			select {
			case <-term.Changed():
			case <-time.After(time.Millisecond):
			}
		}
		lat += time.Since(t0)
		_ = term.Close()
	}
	b.ReportMetric(float64(lat.Microseconds())/1000/float64(b.N), "ms-to-final")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MiB")
}
