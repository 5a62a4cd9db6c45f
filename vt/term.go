package vt

import (
	"io"
	"sync"
)

// TermOptions tunes a Term; zero values pick the defaults.
type TermOptions struct {
	// Scrollback is the raw byte ring size (default 1 MiB).
	Scrollback int
	// Backlog is how many unparsed bytes may pile up before the Term
	// stops parsing everything and jumps ahead (default 256 KiB).
	Backlog int
	// Tail is how much of the newest output is replayed after a jump when
	// no recent anchor exists (default 64 KiB).
	Tail int
	// AnchorSpan: after a jump, replay from the last clear-screen or
	// alternate-screen switch if it is at most this far from the end
	// (default 256 KiB).
	AnchorSpan int
	// New creates the emulator (default NewVT10x).
	New func(cols, rows int) Emulator
}

func (o *TermOptions) defaults() {
	if o.Scrollback <= 0 {
		o.Scrollback = DefaultScrollback
	}
	if o.Backlog <= 0 {
		o.Backlog = 256 << 10
	}
	if o.Tail <= 0 {
		o.Tail = 64 << 10
	}
	if o.AnchorSpan <= 0 {
		o.AnchorSpan = 256 << 10
	}
	if o.New == nil {
		o.New = func(c, r int) Emulator { return NewVT10x(c, r) }
	}
}

// parseChunk is how much is parsed under one lock hold, so that
// Snapshot never waits long.
const parseChunk = 16 << 10

// Term is one terminal: an emulator fed by a background goroutine from a
// Scrollback that producers write into. Write never waits for parsing.
// When output arrives faster than it can be parsed, the Term skips to a
// safe point near the newest bytes (preferring the last clear screen), so
// the screen shows the present instead of lagging; the skipped bytes stay
// in the Scrollback. All methods are safe for concurrent use.
type Term struct {
	opt TermOptions
	sb  *Scrollback

	mu      sync.Mutex // guards emu, parsed, dropped
	emu     Emulator
	parsed  int64
	dropped int64

	kick    chan struct{}
	changed chan struct{}
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

// NewTerm starts a terminal of the given size. Call Close to stop it.
func NewTerm(cols, rows int, opt TermOptions) *Term {
	opt.defaults()
	t := &Term{
		opt:     opt,
		sb:      NewScrollback(opt.Scrollback),
		emu:     opt.New(cols, rows),
		kick:    make(chan struct{}, 1),
		changed: make(chan struct{}, 1),
		done:    make(chan struct{}),
		stopped: make(chan struct{}),
	}
	go t.loop()
	return t
}

// Write stores program output and wakes the parser. It never blocks on
// parsing and always returns len(p), nil.
func (t *Term) Write(p []byte) (int, error) {
	n, _ := t.sb.Write(p)
	select {
	case t.kick <- struct{}{}:
	default:
	}
	return n, nil
}

// Close stops the parser goroutine and waits for it.
func (t *Term) Close() error {
	t.once.Do(func() { close(t.done) })
	<-t.stopped
	return nil
}

// Changed is signalled (without blocking, coalesced) whenever the screen
// may have changed; a UI uses it to schedule a frame.
func (t *Term) Changed() <-chan struct{} { return t.changed }

// Scrollback returns the raw byte ring.
func (t *Term) Scrollback() *Scrollback { return t.sb }

// SetResponseWriter sets where query answers go (usually the PTY input).
func (t *Term) SetResponseWriter(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.emu.SetResponseWriter(w)
}

// Resize resizes the emulator (not the remote PTY).
func (t *Term) Resize(cols, rows int) {
	t.mu.Lock()
	t.emu.Resize(cols, rows)
	t.mu.Unlock()
	t.signal()
}

// Size returns the emulator size.
func (t *Term) Size() (cols, rows int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.emu.Size()
}

// Snapshot copies the current screen.
func (t *Term) Snapshot() *Screen {
	s, _ := t.snapshotAt()
	return s
}

// snapshotAt also returns the stream offset the screen reflects.
func (t *Term) snapshotAt() (*Screen, int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return Capture(t.emu), t.parsed
}

// TermStats counts bytes through a Term.
type TermStats struct {
	Written int64 // bytes written
	Parsed  int64 // offset the screen reflects
	Dropped int64 // bytes skipped to catch up (still in the scrollback if it is big enough)
}

// Stats returns the byte counters. Parsed == Written means caught up.
func (t *Term) Stats() TermStats {
	w := t.sb.End()
	t.mu.Lock()
	defer t.mu.Unlock()
	return TermStats{Written: w, Parsed: t.parsed, Dropped: t.dropped}
}

func (t *Term) signal() {
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *Term) loop() {
	defer close(t.stopped)
	buf := make([]byte, 0, parseChunk)
	for {
		select {
		case <-t.done:
			return
		case <-t.kick:
		}
		for t.step(&buf) {
			select {
			case <-t.done:
				return
			default:
			}
		}
	}
}

// step parses one chunk; it reports false when there was nothing to do.
func (t *Term) step(buf *[]byte) bool {
	end := t.sb.End()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.parsed >= end {
		return false
	}
	if end-t.parsed > int64(t.opt.Backlog) || t.parsed < t.sb.Start() {
		if to := t.jumpTarget(end); to > t.parsed {
			// CAN drops whatever sequence the emulator was in the middle of.
			_, _ = t.emu.Write([]byte{0x18})
			t.dropped += to - t.parsed
			t.parsed = to
		}
	}
	next := min(end, t.parsed+parseChunk)
	*buf = t.sb.AppendRange((*buf)[:0], t.parsed, next)
	_, _ = t.emu.Write(*buf)
	t.parsed = next
	t.signal()
	return true
}

// jumpTarget picks where to resume after falling behind.
func (t *Term) jumpTarget(end int64) int64 {
	start := t.sb.Start()
	if a, ok := t.sb.LastAnchor(); ok && a > t.parsed && a >= start && end-a <= int64(t.opt.AnchorSpan) {
		return a
	}
	want := max(end-int64(t.opt.Tail), t.parsed, start)
	if s, ok := t.sb.SafeAfter(want); ok && s < end {
		return s
	}
	if t.parsed < start {
		if s, ok := t.sb.SafeAfter(start); ok {
			return s
		}
		return end
	}
	return t.parsed
}
