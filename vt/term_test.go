package vt

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// A producer floods a Term while a UI goroutine keeps taking snapshots.
// The Term must drop frames, end on exactly the right screen, and keep
// its memory bounded.
func TestTermFlood(t *testing.T) {
	const total = 24 << 20
	chunk := logCorpus(1<<20, 7)
	term := NewTerm(120, 40, TermOptions{})
	defer term.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the UI
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			case <-term.Changed():
				_ = RenderANSI(term.Snapshot(), ANSIOptions{})
			}
		}
	}()

	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var peak uint64
	var sent int
	tail := []byte(fmt.Sprintf("\x1b[1mthe end %d\x1b[0m\r\n", total))
	for written := 0; written < total; written += len(chunk) {
		_, _ = term.Write(chunk)
		sent += len(chunk)
		if written%(4<<20) == 0 {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc)
		}
	}
	_, _ = term.Write(tail)
	waitCaughtUp(t, term)
	close(stop)
	wg.Wait()

	want := screenOf(append(append([]byte{}, chunk...), tail...), 120, 40)
	got := term.Snapshot()
	if !got.Equal(want) {
		t.Fatalf("final screen differs:\n%s\nwant:\n%s", got.Text(), want.Text())
	}
	st := term.Stats()
	if st.Dropped == 0 {
		t.Errorf("no bytes were dropped; the flood did not trigger catch-up: %+v", st)
	}
	if st.Written != int64(sent+len(tail)) {
		t.Errorf("written %d, want %d", st.Written, sent+len(tail))
	}
	if grown := int64(peak) - int64(base); grown > 48<<20 {
		t.Errorf("heap grew by %d MiB during the flood", grown>>20)
	}
}

// When a full-screen program floods, the Term resumes from the last clear
// screen, so the final frame is complete even though most were skipped.
func TestTermFloodResumesAtClearScreen(t *testing.T) {
	term := NewTerm(40, 10, TermOptions{Backlog: 4 << 10, Tail: 1 << 10})
	defer term.Close()
	frame := func(n int) []byte {
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		for r := 0; r < 10; r++ {
			fmt.Fprintf(&b, "\x1b[%d;1Hframe %d row %d", r+1, n, r)
		}
		return []byte(b.String())
	}
	var all []byte
	for n := 0; n < 5000; n++ {
		f := frame(n)
		all = append(all, f...)
		_, _ = term.Write(f)
	}
	waitCaughtUp(t, term)
	if got, want := term.Snapshot(), screenOf(all, 40, 10); !got.Equal(want) {
		t.Fatalf("final frame differs:\n%s\nwant:\n%s", got.Text(), want.Text())
	}
}

func TestTermResizeAndReplies(t *testing.T) {
	term := NewTerm(10, 3, TermOptions{})
	defer term.Close()
	var mu sync.Mutex
	var replies strings.Builder
	term.SetResponseWriter(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return replies.Write(p)
	}))
	_, _ = term.Write([]byte("\x1b[c"))
	waitCaughtUp(t, term)
	mu.Lock()
	if replies.String() != replyDA1 {
		t.Errorf("reply %q", replies.String())
	}
	mu.Unlock()
	term.Resize(20, 5)
	if c, r := term.Size(); c != 20 || r != 5 {
		t.Errorf("size %dx%d", c, r)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
