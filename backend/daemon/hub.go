package daemon

import (
	"fmt"
	"sort"
	"sync"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// streamKind says which output a chunk came from.
type streamKind uint8

const (
	kindStdout streamKind = iota
	kindStderr
	kindPTY
)

// chunk is an immutable piece of output at an absolute byte offset.
type chunk struct {
	kind streamKind
	off  int64
	data []byte
}

// hub keeps one process's recent output and fans it out. Output lives in one
// shared, bounded log; each subscriber is only a cursor into it, so adding a
// subscriber costs no memory and a fast subscriber never waits for a slow one
// to be served. The log keeps the last replayBytes for Connect's replay, and
// at most lagWindow more while some subscriber still has to read it.
//
// When a subscriber trails the newest byte by more than lagWindow, the writer
// waits for it, as a pipe would, but only while it keeps reading: once it has
// read nothing for stallTimeout it is cut off with ResourceExhausted and the
// writer moves on. So a subscriber that keeps reading is never dropped (a
// reader slower than the process paces it, as a terminal does), a stalled one
// can hold the process up for at most stallTimeout once, and neither costs
// memory beyond the shared window.
//
// The stall grace comes out of one budget per process: time the writer
// spends waiting on subscribers that read nothing meanwhile is taken from
// it, and it grows back at 1/stallBudgetRefill of the time that passes. So
// a fresh stalled subscriber every second cannot throttle a process without
// end: once the budget is spent, a lagging subscriber that has read nothing
// for minStallGrace is cut at once.
type hub struct {
	replay int64
	window int64
	stall  time.Duration

	budget   time.Duration // stall grace left, at most stall
	budgetAt time.Time     // when budget was last brought up to date
	waited   time.Duration // total time writers waited on subscribers (for tests)

	mu       sync.Mutex
	chunks   []chunk   // contiguous, ordered by off
	owners   []*outBuf // per chunk: its pooled buffer, or nil
	start    int64     // offset of the first retained byte
	end      int64     // offset after the last byte written
	subs     map[*subscriber]struct{}
	changed  chan struct{} // closed and replaced when output arrives or the hub closes
	progress chan struct{} // closed and replaced when a subscriber reads or leaves
	closed   bool
	final    *process.ProcessEvent_EndEvent
}

type subscriber struct {
	h            *hub
	cursor       int64
	lastRead     time.Time
	cut          error
	deliveredEnd bool
	// held are the pooled buffers of what next last returned: the caller
	// may still be sending from them until it calls next again or leaves.
	held []*outBuf
}

func newHub(replay int, stall time.Duration) *hub {
	return &hub{
		replay:   int64(replay),
		window:   int64(replay) + lagWindow,
		stall:    stall,
		budget:   stall,
		budgetAt: time.Now(),
		subs:     make(map[*subscriber]struct{}),
		changed:  make(chan struct{}),
		progress: make(chan struct{}),
	}
}

// publish appends output. data must not be modified afterwards.
func (h *hub) publish(kind streamKind, data []byte) {
	h.publishOwned(kind, data, nil)
}

// publishPooled appends output held in a pooled buffer (data is within
// o.b), which the hub hands back to its pool once nothing holds it.
func (h *hub) publishPooled(kind streamKind, data []byte, o *outBuf) {
	h.publishOwned(kind, data, o)
}

func (h *hub) publishOwned(kind streamKind, data []byte, o *outBuf) {
	if len(data) == 0 {
		if o != nil {
			putOutBuf(o)
		}
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		if o != nil {
			putOutBuf(o)
		}
		return
	}
	if o != nil {
		o.refs = 1 // the log's
	}
	h.chunks = append(h.chunks, chunk{kind: kind, off: h.end, data: data})
	h.owners = append(h.owners, o)
	h.end += int64(len(data))
	close(h.changed)
	h.changed = make(chan struct{})
	h.enforceWindow()
	h.trim()
}

// enforceWindow makes sure no subscriber trails by more than the window:
// it waits out the grace of those that do, and cuts off those whose grace is
// spent. Called with h.mu held; may release it while waiting.
func (h *hub) enforceWindow() {
	for {
		limit := h.end - h.window
		if limit <= h.start {
			return
		}
		now := time.Now()
		grace := h.grace(now)
		var wait time.Duration = -1
		for s := range h.subs {
			if s.cursor >= limit {
				continue
			}
			left := grace - now.Sub(s.lastRead)
			if left <= 0 {
				h.cutOff(s, now.Sub(s.lastRead))
				continue
			}
			if wait < 0 || left < wait {
				wait = left
			}
		}
		if wait < 0 {
			return
		}
		progress := h.progress
		h.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-progress:
		case <-t.C:
		}
		t.Stop()
		h.mu.Lock()
		h.waited += time.Since(now)
		h.charge(now)
	}
}

const (
	stallBudgetRefill = 8
	minStallGrace     = 50 * time.Millisecond
)

// grace is how long a lagging subscriber may go without reading before it
// is cut: the budget left, but never less than minStallGrace.
func (h *hub) grace(now time.Time) time.Duration {
	if now.After(h.budgetAt) {
		h.budget = min(h.stall, h.budget+now.Sub(h.budgetAt)/stallBudgetRefill)
		h.budgetAt = now
	}
	return max(h.budget, min(minStallGrace, h.stall))
}

// charge takes a wait that began at since from the budget when some lagging
// subscriber read nothing during all of it: a stalled reader held the
// writer up. A wait on readers that keep reading is pacing, and free.
func (h *hub) charge(since time.Time) {
	limit := h.end - h.window
	for s := range h.subs {
		if s.cursor < limit && s.lastRead.Before(since) {
			h.budget = max(0, h.budget-time.Since(since))
			return
		}
	}
}

func (h *hub) cutOff(s *subscriber, stalled time.Duration) {
	s.cut = connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"subscriber fell behind by %d bytes and read nothing for %s (limit %s); reconnect to resume from the replay buffer",
		h.end-s.cursor, stalled.Round(time.Millisecond), h.stall))
	delete(h.subs, s)
}

// trim drops output that is neither in the replay window nor unread by a
// subscriber. Called with h.mu held.
func (h *hub) trim() {
	keep := h.end - h.replay
	for s := range h.subs {
		if s.cursor < keep {
			keep = s.cursor
		}
	}
	if keep <= h.start {
		return
	}
	i := 0
	for i < len(h.chunks) && h.chunks[i].off+int64(len(h.chunks[i].data)) <= keep {
		h.chunks[i] = chunk{} // let the collector have it
		if o := h.owners[i]; o != nil {
			h.owners[i] = nil
			release(o)
		}
		i++
	}
	h.chunks = h.chunks[i:]
	h.owners = h.owners[i:]
	if len(h.chunks) > 0 && h.chunks[0].off < keep {
		c := &h.chunks[0]
		c.data = c.data[keep-c.off:]
		c.off = keep
	}
	h.start = keep
}

// subscribe registers a reader. With replay it starts at the oldest byte of
// the replay window; otherwise at the next byte written. Registration and the
// choice of cursor happen under one lock, so replay and live output meet
// without a gap or a duplicate.
func (h *hub) subscribe(replay bool) *subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &subscriber{h: h, cursor: h.end, lastRead: time.Now()}
	if replay {
		s.cursor = max(h.start, h.end-h.replay)
	}
	h.subs[s] = struct{}{}
	return s
}

// release drops one hold on a pooled buffer. Called with the hub's lock.
func release(o *outBuf) {
	switch o.refs--; {
	case o.refs == 0:
		putOutBuf(o)
	case o.refs < 0:
		panic("daemon: an output buffer was released more often than held")
	}
}

// releaseHeld drops the subscriber's holds on what next last returned.
// Called with the hub's lock.
func (s *subscriber) releaseHeld() {
	for i, o := range s.held {
		release(o)
		s.held[i] = nil
	}
	s.held = s.held[:0]
}

// unsubscribe lets the log be trimmed past this reader. The caller must be
// done with what next returned.
func (s *subscriber) unsubscribe() {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s.releaseHeld()
	if _, ok := h.subs[s]; ok {
		delete(h.subs, s)
		h.wakeWriters()
		// Nothing may publish again (the process may have exited), so
		// whatever only this reader still needed goes now.
		h.trim()
	}
}

func (h *hub) wakeWriters() {
	close(h.progress)
	h.progress = make(chan struct{})
}

// close marks the end of output; subscribers get final after the rest of
// their unread output.
func (h *hub) close(final *process.ProcessEvent_EndEvent) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return
	}
	h.closed = true
	h.final = final
	close(h.changed)
	h.changed = make(chan struct{})
}

// next returns what the subscriber should send now: up to maxBytes of output,
// or the end event, or an error if it was cut off. When there is nothing yet
// it returns a channel that is closed when there may be. The output's bytes
// stay the subscriber's to read until it calls next again or unsubscribes.
func (s *subscriber) next(maxBytes int) (out []chunk, final *process.ProcessEvent_EndEvent, err error, wait <-chan struct{}) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	s.releaseHeld()
	if s.cut != nil {
		return nil, nil, s.cut, nil
	}
	if s.cursor < h.end {
		i := sort.Search(len(h.chunks), func(i int) bool {
			c := h.chunks[i]
			return c.off+int64(len(c.data)) > s.cursor
		})
		n := 0
		for ; i < len(h.chunks) && n < maxBytes; i++ {
			c := h.chunks[i]
			if c.off < s.cursor {
				c.data = c.data[s.cursor-c.off:]
				c.off = s.cursor
			}
			if room := maxBytes - n; len(c.data) > room && n > 0 {
				break
			}
			out = append(out, c)
			if o := h.owners[i]; o != nil {
				o.refs++
				s.held = append(s.held, o)
			}
			n += len(c.data)
			s.cursor = c.off + int64(len(c.data))
		}
		s.lastRead = time.Now()
		h.wakeWriters()
		// The returned chunks are copies of the headers, and their pooled
		// buffers are held above: trimming only drops the log's holds on
		// data this reader may still send.
		h.trim()
		return out, nil, nil, nil
	}
	if h.closed {
		if s.deliveredEnd {
			return nil, nil, nil, nil
		}
		s.deliveredEnd = true
		return nil, h.final, nil, nil
	}
	return nil, nil, nil, h.changed
}

// retained reports the bytes the log currently holds (for tests).
func (h *hub) retained() int64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.end - h.start
}
