package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"sandtop/outlog"
)

// feed gives the printer out1/err1/out2/… one second apart from t0, the
// last line without its newline, and finishes.
func feed(p *logPrinter, t0 time.Time) {
	segs := []outlog.Segment{
		{Stream: outlog.Stdout, At: t0, Data: []byte("out1\nou")},
		{Stream: outlog.Stderr, At: t0.Add(time.Second), Data: []byte("err1\n")},
		{Stream: outlog.Stdout, At: t0.Add(2 * time.Second), Data: []byte("t2\n")},
		{Stream: outlog.Stdout, At: t0.Add(3 * time.Second), Data: []byte("out3\nno-newline")},
	}
	for _, s := range segs {
		_ = p.segment(s)
	}
	p.finish()
}

func TestLogPrinterTailSinceAndTimestamps(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 2, 0, 0, 5, time.UTC)
	cases := []struct {
		name     string
		opts     logsOptions
		since    time.Time
		out, err string
	}{
		{"as written", logsOptions{}, time.Time{}, "out1\nout2\nout3\nno-newline", "err1\n"},
		{"tail 2", logsOptions{tail: 2, hasTail: true}, time.Time{}, "out3\nno-newline", ""},
		{"tail 4 spans both streams", logsOptions{tail: 4, hasTail: true}, time.Time{}, "out2\nout3\nno-newline", "err1\n"},
		{"tail 0", logsOptions{tail: 0, hasTail: true}, time.Time{}, "", ""},
		// out2 began at t0 (its first piece), so it is older than t0+1s.
		{"since", logsOptions{}, t0.Add(time.Second), "out3\nno-newline", "err1\n"},
		{"timestamps", logsOptions{timestamps: true}, time.Time{},
			"2026-12-06T02:00:00.000000005Z out1\n2026-12-06T02:00:00.000000005Z out2\n2026-12-06T02:00:03.000000005Z out3\n2026-12-06T02:00:03.000000005Z no-newline",
			"2026-12-06T02:00:01.000000005Z err1\n"},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		p := newLogPrinter(&out, &errb, c.opts, c.since)
		feed(p, t0)
		if out.String() != c.out || errb.String() != c.err {
			t.Errorf("%s: stdout %q stderr %q; want %q and %q", c.name, out.String(), errb.String(), c.out, c.err)
		}
	}
}

// Output with no times is printed whole by --since, without a time by
// --timestamps, and said so once.
func TestLogPrinterSaysWhenTimesAreUnknown(t *testing.T) {
	var out, errb bytes.Buffer
	p := newLogPrinter(&out, &errb, logsOptions{timestamps: true}, time.Now())
	_ = p.segment(outlog.Segment{Stream: outlog.Stdout, Data: []byte("old\n")})
	p.finish()
	p.noteUnmarked(42, true)
	if out.String() != "old\n" || !strings.Contains(errb.String(), "without arrival times") {
		t.Fatalf("stdout %q stderr %q", out.String(), errb.String())
	}
}
