package outlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// diskSource reads real files, as the control plane's ReadRange does.
type diskSource struct{}

func (diskSource) ReadRange(_ context.Context, path string, off int64, n int) ([]byte, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, 0, err
	}
	b := make([]byte, n)
	k, err := f.ReadAt(b, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, err
	}
	return b[:k], fi.Size(), nil
}

func notFound(err error) bool { return errors.Is(err, fs.ErrNotExist) }

// group is a state directory written as a supervisor writes it: each
// piece to its spill, then its mark.
type group struct {
	t     *testing.T
	dir   string
	spill [2]*os.File
	marks *Writer
	mf    *os.File
	clock time.Time
}

func newGroup(t *testing.T, marked bool) *group {
	g := &group{t: t, dir: t.TempDir(), clock: time.Date(2026, 12, 6, 2, 0, 0, 0, time.UTC)}
	if marked {
		f, err := os.Create(filepath.Join(g.dir, File))
		if err != nil {
			t.Fatal(err)
		}
		g.mf = f
		if g.marks, err = NewWriter(f); err != nil {
			t.Fatal(err)
		}
		g.marks.now = func() time.Time { return g.clock }
	}
	for i, name := range []string{"stdout.log", "stderr.log"} {
		f, err := os.Create(filepath.Join(g.dir, name))
		if err != nil {
			t.Fatal(err)
		}
		g.spill[i] = f
	}
	t.Cleanup(func() {
		for _, f := range append(g.spill[:], g.mf) {
			if f != nil {
				f.Close()
			}
		}
	})
	return g
}

// write is one read of one stream's pipe, a millisecond after the last.
func (g *group) write(s Stream, text string) {
	g.clock = g.clock.Add(time.Millisecond)
	if _, err := g.spill[s-1].WriteString(text); err != nil {
		g.t.Fatal(err)
	}
	g.marks.Add(s, len(text))
}

func (g *group) reader(chunk int) *Reader {
	return NewReader(diskSource{}, g.dir, "stdout.log", "stderr.log", chunk, notFound)
}

// render is what the segments say: "stream@ms:text|...".
func render(segs []Segment) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(s.Stream.String())
		if !s.At.IsZero() {
			b.WriteString("@" + s.At.Format("05.000"))
		}
		b.WriteString(":" + string(s.Data) + "|")
	}
	return b.String()
}

func readAll(t *testing.T, r *Reader) []Segment {
	t.Helper()
	var out []Segment
	if err := r.ReadAll(context.Background(), func(s Segment) error { out = append(out, s); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStdoutAndStderrReadBackInArrivalOrderWithTimes(t *testing.T) {
	g := newGroup(t, true)
	g.write(Stdout, "out1\n")
	g.write(Stderr, "err1\n")
	g.write(Stdout, "out2\n")
	r := g.reader(1 << 20)
	got := render(readAll(t, r))
	want := "stdout@00.001:out1\n|stderr@00.002:err1\n|stdout@00.003:out2\n|"
	if got != want || !r.Marked() {
		t.Fatalf("read back %q (marked %v), want %q", got, r.Marked(), want)
	}
}

// A spill written before marks existed (or by the bash wrapper) reads as
// it always did: stdout, then stderr, with no times.
func TestSpillWithoutMarksReadsAsBefore(t *testing.T) {
	g := newGroup(t, false)
	g.spill[0].WriteString("out1\nout2\n")
	g.spill[1].WriteString("err1\n")
	r := g.reader(1 << 20)
	got := render(readAll(t, r))
	if want := "stdout:out1\nout2\n|stderr:err1\n|"; got != want || r.Marked() || !r.Found() {
		t.Fatalf("old layout read back %q (marked %v, found %v), want %q", got, r.Marked(), r.Found(), want)
	}
}

// Following: each call returns only what came since, and a mark written
// in halves waits for its second half.
func TestNextReturnsOnlyWhatIsNewAndWaitsForATornMark(t *testing.T) {
	g := newGroup(t, true)
	r := g.reader(1 << 20)
	ctx := context.Background()
	next := func(final bool) string {
		t.Helper()
		segs, err := r.Next(ctx, final)
		if err != nil {
			t.Fatal(err)
		}
		return render(segs)
	}
	if got := next(false); got != "" {
		t.Fatalf("nothing written yet, read %q", got)
	}
	g.write(Stdout, "a\n")
	if got := next(false); got != "stdout@00.001:a\n|" {
		t.Fatalf("first read %q", got)
	}
	if got := next(false); got != "" {
		t.Fatalf("read %q again", got)
	}
	// The spill grows and half its mark is written: nothing yet.
	g.spill[1].WriteString("b\n")
	var whole bytes.Buffer
	whole.Write(appendMark(nil, Mark{Stream: Stderr, Len: 2, At: g.clock.Add(time.Second)}))
	g.mf.Write(whole.Bytes()[:7])
	if got := next(false); got != "" {
		t.Fatalf("read %q before its mark was whole", got)
	}
	g.mf.Write(whole.Bytes()[7:])
	if got := next(false); got != "stderr@01.001:b\n|" {
		t.Fatalf("after the mark was whole, read %q", got)
	}
}

// Bytes past the marks (the marks file full, or a supervisor that died
// between the spill and its mark) come once the group is over, untimed.
func TestUnmarkedTailComesLastWhenFinal(t *testing.T) {
	g := newGroup(t, true)
	g.write(Stderr, "e1\n")
	g.spill[0].WriteString("o-unmarked\n")
	r := g.reader(1 << 20)
	segs, err := r.Next(context.Background(), false)
	if err != nil || render(segs) != "stderr@00.001:e1\n|" {
		t.Fatalf("live read %q, %v", render(segs), err)
	}
	if segs, _ := r.Next(context.Background(), false); len(segs) != 0 {
		t.Fatalf("unmarked bytes came while the group may still write: %q", render(segs))
	}
	if got := render(readAll(t, r)); got != "stdout:o-unmarked\n|" {
		t.Fatalf("final read %q", got)
	}
}

// Reads stay within the chunk however large the record.
func TestLargeOutputReadsInBoundedChunks(t *testing.T) {
	g := newGroup(t, true)
	var want strings.Builder
	for i := range 2000 {
		s := Stream(i%2 + 1)
		text := strings.Repeat(string(rune('a'+i%26)), 100) + "\n"
		g.write(s, text)
		if s == Stdout {
			want.WriteString(text)
		}
	}
	r := g.reader(4096)
	var got strings.Builder
	for {
		segs, err := r.Next(context.Background(), true)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) == 0 {
			break
		}
		n := 0
		for _, s := range segs {
			n += len(s.Data)
			if s.Stream == Stdout {
				got.Write(s.Data)
			}
		}
		if n > 4096+101 {
			t.Fatalf("one Next returned %d bytes for a 4096-byte chunk", n)
		}
	}
	if got.String() != want.String() {
		t.Fatalf("stdout read back differs (%d bytes, want %d)", got.Len(), want.Len())
	}
}

// The marks stop at MaxMarksSize; the spill does not.
func TestMarksFileIsBounded(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for range MaxMarksSize/MarkSize + 100 {
		w.Add(Stdout, 1)
	}
	if buf.Len() != MaxMarksSize {
		t.Fatalf("marks file grew to %d bytes, bound %d", buf.Len(), MaxMarksSize)
	}
}

// A line written in pieces, with the other stream writing in between, is
// one line with its first piece's time.
func TestLinerKeepsEachStreamsLinesWhole(t *testing.T) {
	t0 := time.Unix(100, 0)
	var l Liner
	var got []string
	each := func(line Line) {
		got = append(got, line.Stream.String()+"@"+line.At.Format("05")+":"+string(line.Text))
	}
	l.Add(Segment{Stream: Stdout, At: t0, Data: []byte("hel")}, each)
	l.Add(Segment{Stream: Stderr, At: t0.Add(time.Second), Data: []byte("warn\n")}, each)
	l.Add(Segment{Stream: Stdout, At: t0.Add(2 * time.Second), Data: []byte("lo\nnext\npart")}, each)
	l.Flush(each)
	want := []string{"stderr@41:warn\n", "stdout@40:hello\n", "stdout@42:next\n", "stdout@42:part"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("lines %q, want %q", got, want)
	}
}

// Once the marks file is full, what follows is read as it comes, untimed,
// while the group still writes.
func TestOutputPastFullMarksIsReadWhileTheGroupRuns(t *testing.T) {
	g := newGroup(t, true)
	for range (MaxMarksSize - HeaderSize) / MarkSize {
		g.write(Stdout, "x")
	}
	g.write(Stderr, "past the marks\n") // spilled, not marked
	r := g.reader(1 << 20)
	n := 0
	var last []Segment
	for {
		segs, err := r.Next(context.Background(), false)
		if err != nil {
			t.Fatal(err)
		}
		if len(segs) == 0 {
			break
		}
		n += len(segs)
		last = segs
	}
	if got := render(last[len(last)-1:]); got != "stderr:past the marks\n|" || n != (MaxMarksSize-HeaderSize)/MarkSize+1 {
		t.Fatalf("read %d segments, the last %q", n, got)
	}
}

// Marks whose spill was removed (a prune, a hand) are an error that says
// the output is gone, not an empty read.
func TestMarkedOutputWhoseSpillIsGoneIsAnError(t *testing.T) {
	g := newGroup(t, true)
	g.write(Stdout, "out1\n")
	g.write(Stderr, "err1\n")
	for _, name := range []string{"stdout.log", "stderr.log"} {
		if err := os.Remove(filepath.Join(g.dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	r := g.reader(1 << 20)
	err := r.ReadAll(context.Background(), func(Segment) error { return nil })
	if !errors.Is(err, ErrSpillGone) || !strings.Contains(err.Error(), "stdout.log") {
		t.Fatalf("ReadAll of marks without spills: %v; want ErrSpillGone naming stdout.log", err)
	}
}
