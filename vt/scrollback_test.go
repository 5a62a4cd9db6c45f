package vt

import (
	"bytes"
	"strings"
	"testing"
)

func TestScrollbackRingKeepsNewestBytes(t *testing.T) {
	sb := NewScrollback(4096)
	data := logCorpus(50_000, 1)
	for _, c := range randomChunks(data, 3) {
		_, _ = sb.Write(c)
	}
	if sb.End() != int64(len(data)) || sb.Start() != int64(len(data)-4096) {
		t.Fatalf("start %d end %d, want %d %d", sb.Start(), sb.End(), len(data)-4096, len(data))
	}
	got := sb.AppendRange(nil, 0, sb.End())
	if !bytes.Equal(got, data[len(data)-4096:]) {
		t.Fatal("ring content is not the newest 4096 bytes")
	}
	if s := sb.SafeStart(); s < sb.Start() {
		t.Fatalf("safe start %d is before the ring start %d", s, sb.Start())
	}
}

// Every safe offset the scanner records must be a point where the
// emulator's parser is in ground state.
func TestScrollbackSafePointsAreSafe(t *testing.T) {
	var stream []byte
	for i := 0; i < 400; i++ {
		stream = append(stream, "\x1b]2;title with ünïcode and \x1b[ inside\x07"...)
		stream = append(stream, "日本語\x1b[38;2;1;2;3mcolour\x1b[0m\x1bP+q544e\x1b\\"...)
		stream = append(stream, strings.Repeat("x", i%97)...)
		stream = append(stream, "\xe2\x82\xac\x1b[?1049h\x1b[H\x1b[2J\x1b[?1049l\r\n"...)
	}
	sb := NewScrollback(1 << 20)
	sb.gran = 1 // record as many safe points as possible
	for _, c := range randomChunks(stream, 5) {
		_, _ = sb.Write(c)
	}
	pts := append([]int64{}, sb.safe.v[sb.safe.head:]...)
	pts = append(pts, sb.anch.v[sb.anch.head:]...)
	if len(pts) < 1000 {
		t.Fatalf("only %d safe points", len(pts))
	}
	e := NewVT10x(80, 24)
	fed := int64(0)
	for _, off := range sortedUnique(pts) {
		_, _ = e.Write(stream[fed:off])
		fed = off
		if !e.inGround() {
			t.Fatalf("offset %d is not safe: parser state %d, utf8 need %d; next bytes %q",
				off, e.p.state, e.p.need, stream[off:min(int(off)+12, len(stream))])
		}
	}
}

func sortedUnique(v []int64) []int64 {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j-1] > v[j]; j-- {
			v[j-1], v[j] = v[j], v[j-1]
		}
	}
	out := v[:0]
	for i, x := range v {
		if i == 0 || x != v[i-1] {
			out = append(out, x)
		}
	}
	return out
}

func TestScrollbackAnchors(t *testing.T) {
	sb := NewScrollback(4096)
	_, _ = sb.Write([]byte("old stuff\r\n\x1b[H\x1b[2Jnew"))
	a, ok := sb.LastAnchor()
	if !ok || a != int64(len("old stuff\r\n")) {
		t.Fatalf("anchor = %d, %v; want the CUP before ED 2 at %d", a, ok, len("old stuff\r\n"))
	}
	_, _ = sb.Write([]byte("\x1b[?1049h"))
	if a, _ := sb.LastAnchor(); a != int64(len("old stuff\r\n\x1b[H\x1b[2Jnew")) {
		t.Fatalf("alt-screen anchor = %d", a)
	}
}

// Replaying a wrapped ring (from its oldest safe point) into a fresh
// emulator gives the same screen as parsing the whole stream, for line
// output.
func TestScrollbackReplayAfterWrap(t *testing.T) {
	data := logCorpus(300_000, 2)
	sb := NewScrollback(32 << 10)
	_, _ = sb.Write(data)
	e := NewVT10x(120, 40)
	if _, err := sb.Replay(e); err != nil {
		t.Fatal(err)
	}
	if got, want := Capture(e), screenOf(data, 120, 40); !got.Equal(want) {
		t.Fatalf("replay differs:\n%s\nwant:\n%s", got.Text(), want.Text())
	}
}
