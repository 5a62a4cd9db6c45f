package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"sandtop/themes"
)

func TestOutputLinesAreSafeToDraw(t *testing.T) {
	o := newOutputView()
	o.setHeight(10)
	o.append([]byte("ok  \tsandbox/events\t0.201s\n"), time.Time{})
	o.append([]byte("bell\a back\b del\x7f\x1b[2J\x1b]0;title\x07end\n"), time.Time{})
	o.append([]byte("\x1b[31mred\n still red\x1b[0m plain\n"), time.Time{})
	o.append([]byte("progress 10%\rprogress 100%\r\n"), time.Time{})

	if got, want := o.line(0), "ok      sandbox/events  0.201s"; got != want {
		t.Errorf("tabs: %q, want %q (stops every 8 cells)", got, want)
	}
	if got, want := o.line(1), "bell␇ back␈ del␡end"; got != want {
		t.Errorf("controls: %q, want %q", got, want)
	}
	for i := 0; i < o.count(); i++ {
		for _, c := range ansi.Strip(o.get(i).text) {
			if c < ' ' || c == 0x7f {
				t.Fatalf("line %d passes control %q through: %q", i, c, o.get(i).text)
			}
		}
	}
	if l := o.get(2).text; !strings.Contains(l, "\x1b[31m") || !strings.HasSuffix(l, "\x1b[0m") {
		t.Errorf("colour not kept (or not closed): %q", l)
	}
	if l := o.get(3).text; !strings.HasPrefix(l, "\x1b[31m") {
		t.Errorf("colour open at the end of a line does not carry over: %q", l)
	}
	if got := o.line(4); got != "progress 100%" {
		t.Errorf("carriage return: %q", got)
	}
}

func TestOutputWrapAndSidewaysScroll(t *testing.T) {
	o := newOutputView()
	o.setHeight(5)
	long := strings.Repeat("0123456789", 50)
	o.append([]byte("short\n"+long+"\n"), time.Time{})
	st := newStyles(themes.MustLoad("dark"))
	rows := o.render(st, 40)
	if len(rows) != 2 || !strings.HasSuffix(rows[1], "…") || ansi.StringWidth(rows[1]) != 40 {
		t.Fatalf("cut rows = %q", rows)
	}
	o.scrollX(100)
	if rows = o.render(st, 40); !strings.HasPrefix(rows[1], "…123456789") {
		t.Fatalf("scrolled row = %q", rows[1])
	}
	o.setWrap(true)
	rows = o.render(st, 40)
	if len(rows) != 5 {
		t.Fatalf("wrapped rows = %d, want the 5 that fit", len(rows))
	}
	if rows[4] != long[480:] {
		t.Fatalf("following a wrapped tail, the last row is %q", rows[4])
	}
	for _, r := range rows {
		if ansi.StringWidth(r) > 40 {
			t.Fatalf("row wider than the pane: %q", r)
		}
	}
}

func TestOutputTimestamps(t *testing.T) {
	o := newOutputView()
	o.setHeight(3)
	at := time.Date(2026, 1, 2, 15, 4, 5, 0, time.Local)
	o.append([]byte("one\n"), at)
	o.timestamps = true
	rows := o.render(newStyles(themes.MustLoad("dark")), 40)
	if got := ansi.Strip(rows[0]); got != "15:04:05 one" {
		t.Fatalf("row = %q", got)
	}
	if !strings.HasPrefix(o.plainText(), at.Format(time.RFC3339Nano)+" one\n") {
		t.Fatalf("saved text = %q", o.plainText())
	}
}

// TestOutputLinesKeepTheirPiecesArrivalTimes: a line takes the sandbox's
// time of its first byte; bytes without one take the time they reached
// the TUI, and the view then knows its times are as received.
func TestOutputLinesKeepTheirPiecesArrivalTimes(t *testing.T) {
	o := newOutputView()
	o.setHeight(5)
	t1 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	t2, now := t1.Add(1500*time.Millisecond), t1.Add(time.Hour)
	o.appendPieces([]byte("a\nb\nc"), []pieceTime{{0, t1}, {2, t2}}, now)
	if o.asReceived {
		t.Fatal("timed pieces counted as received")
	}
	o.appendPieces([]byte("d\ne\n"), []pieceTime{{0, time.Time{}}}, now)
	want := []struct {
		text string
		at   time.Time
	}{{"a", t1}, {"b", t2}, {"cd", t2}, {"e", now}}
	if o.count() != len(want) {
		t.Fatalf("%d lines: %q", o.count(), o.plainText())
	}
	for i, w := range want {
		if l := o.get(i); l.plain != w.text || !l.at.Equal(w.at) {
			t.Errorf("line %d = %q at %s, want %q at %s", i, l.plain, l.at, w.text, w.at)
		}
	}
	if !o.asReceived {
		t.Fatal("untimed bytes did not mark the times as received")
	}
}

// TestPumpKeepsTimesAcrossAFloodCut: when a flood is cut to its tail, the
// bytes kept still carry the time of the piece they came in.
func TestPumpKeepsTimesAcrossAFloodCut(t *testing.T) {
	t1 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	t2 := t1.Add(time.Second)
	half := maxPending / 2
	p := &pump{buf: []byte(strings.Repeat("x", half) + "\n" + strings.Repeat("y", half) + "\n" + "zz\n"),
		times: []pieceTime{{0, t1}, {half + 1 + half + 1, t2}}}
	p.keepTail()
	data, times, dropped, _, _ := p.take()
	if dropped == 0 || len(times) != 2 || times[0].off != 0 || !times[0].at.Equal(t1) || !times[1].at.Equal(t2) ||
		string(data[times[1].off:]) != "zz\n" {
		t.Fatalf("after the cut: %d bytes, dropped %d, times %+v", len(data), dropped, times)
	}
}

// BenchmarkOutputAppendTimedPieces: a frame's worth of kept output, 1 MiB
// in 100-byte lines, as one untimed piece or as a timed piece per line.
func BenchmarkOutputAppendTimedPieces(b *testing.B) {
	line := strings.Repeat("x", 99) + "\n"
	data := []byte(strings.Repeat(line, 10486))
	t0 := time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)
	timed := make([]pieceTime, 0, 10486)
	for i := range 10486 {
		timed = append(timed, pieceTime{off: i * len(line), at: t0.Add(time.Duration(i) * time.Millisecond)})
	}
	for _, c := range []struct {
		name  string
		times []pieceTime
	}{{"untimed", nil}, {"per_line", timed}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				o := newOutputView()
				o.setHeight(40)
				o.appendPieces(data, c.times, t0)
			}
		})
	}
}
