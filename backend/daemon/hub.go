package daemon

import (
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
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
// waits for it, as a pipe would. A subscriber is cut off with
// ResourceExhausted only once it has read nothing for the whole stallTimeout,
// whatever the load: one that merely waits for the CPU, or reads slower than
// the process writes, paces the writer (as a terminal does) and loses
// nothing.
//
// A stalled subscriber holds the writer for up to stallTimeout before it is
// cut. So that a stream of fresh stalled subscribers cannot throttle a
// process without end, that time comes out of one budget per process
// (stallBudgetStalls stall limits, growing back at 1/stallBudgetRefill of the
// time that passes). The budget is charged only when a subscriber is cut,
// with the time the writer waited on it: waits on subscribers that go on to
// read are pacing and cost nothing, so readers that keep reading never spend
// it. Once stalled subscribers have spent it, the writer stops waiting for a
// lagging subscriber whose wait would exceed what is left: it is let go
// (detached) and no longer holds the log. If it reads again before the log
// moves past its cursor it carries on; if the output it had not read is gone
// by then, its stream ends with ResourceExhausted saying which bytes it lost
// and why. Only a subscriber that stalls for the whole limit is cut for
// stalling.
type hub struct {
	replay int64
	window int64
	stall  time.Duration

	budget   time.Duration // stall time the writer may still spend waiting
	budgetAt time.Time     // when budget was last brought up to date
	waited   time.Duration // total time the writer waited on subscribers
	charged  time.Duration // waited, up to which the budget has been charged

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
	h        *hub
	cursor   int64
	lastRead time.Time
	// waitMark is h.waited when it last read: the writer's waits since
	// then are what it would be charged if it were cut.
	waitMark time.Duration
	// detached: the writer no longer waits for it, and the log may be
	// trimmed past its cursor.
	detached bool
	// wrote, when set, is when the client last took some of what is being
	// sent to it: a reader in the middle of a large message is reading.
	wrote        *writeProgress
	cut          error
	deliveredEnd bool
	// held are the pooled buffers of what next last returned: the caller
	// may still be sending from them until it calls next again or leaves.
	held []*outBuf
	// onChange, when set, runs once (under the hub's lock) when output
	// arrives or the hub closes: a parked stream's wake-up (parkUntil).
	onChange func()
}

// stallBudgetStalls is the budget in stall limits: one stalled subscriber
// (a `logs -f` suspended with Ctrl-Z) never leaves the others without it.
const (
	stallBudgetStalls = 2
	stallBudgetRefill = 8
)

// setLag sets how far subscribers may trail the newest output (lagWindow
// by default); only before any output is published.
func (h *hub) setLag(lag int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.window = h.replay + lag
}

func newHub(replay int, stall time.Duration) *hub {
	return &hub{
		replay:   int64(replay),
		window:   int64(replay) + lagWindow,
		stall:    stall,
		budget:   stallBudgetStalls * stall,
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
	h.changedLocked()
	h.enforceWindow()
	h.trim()
}

// enforceWindow makes sure no subscriber the writer waits for trails by more
// than the window: it waits while they read, cuts off those that have read
// nothing for the stall limit, and lets go of those it cannot wait for any
// longer. Called with h.mu held; may release it while waiting.
func (h *hub) enforceWindow() {
	for {
		limit := h.end - h.window
		if limit <= h.start {
			return
		}
		now := time.Now()
		h.refill(now)
		var wait time.Duration = -1
		for s := range h.subs {
			if s.cursor >= limit {
				continue
			}
			idle := now.Sub(s.lastActive())
			if idle >= h.stall {
				h.cutOff(s, idle)
				continue
			}
			if s.detached {
				continue
			}
			room := h.budget - h.pending(s)
			if room <= 0 {
				s.detached = true
				continue
			}
			left := min(h.stall-idle, room)
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
		for s := range h.subs {
			if s.lastActive().After(now) { // read during the wait: pacing
				s.waitMark = h.waited
			}
		}
	}
}

// writeProgress is when a request's response last moved to the client
// (see deadlineWriter), in Unix nanoseconds.
type writeProgress struct{ at atomic.Int64 }

func (p *writeProgress) note() { p.at.Store(time.Now().UnixNano()) }

// lastActive is the latest of its last read from the log and the client's
// last taking of bytes. Called with the hub's lock.
func (s *subscriber) lastActive() time.Time {
	t := s.lastRead
	if s.wrote != nil {
		if w := time.Unix(0, s.wrote.at.Load()); w.After(t) {
			t = w
		}
	}
	return t
}

// watchWrites makes the client's taking of bytes through p count as reading.
func (s *subscriber) watchWrites(p *writeProgress) {
	s.h.mu.Lock()
	s.wrote = p
	s.h.mu.Unlock()
}

// refill grows the budget back with the time that passed.
func (h *hub) refill(now time.Time) {
	if now.After(h.budgetAt) {
		h.budget = min(stallBudgetStalls*h.stall, h.budget+now.Sub(h.budgetAt)/stallBudgetRefill)
		h.budgetAt = now
	}
}

// pending is the writer's waiting that s would be charged with if it were
// cut now: the waits since it last read, less what was charged already (two
// subscribers stalled at once held the writer once).
func (h *hub) pending(s *subscriber) time.Duration {
	return h.waited - max(s.waitMark, h.charged)
}

// cutOff ends a subscriber that has read nothing for the stall limit, and
// charges the budget with the time the writer waited on it.
func (h *hub) cutOff(s *subscriber, idle time.Duration) {
	h.budget = max(0, h.budget-h.pending(s))
	h.charged = h.waited
	s.cut = connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"subscriber fell behind by %d bytes and read nothing for %s (limit %s); reconnect to resume from the replay buffer",
		h.end-s.cursor, idle.Round(time.Millisecond), h.stall))
	delete(h.subs, s)
}

// overrun ends a detached subscriber whose unread output the log has
// dropped. Called with h.mu held.
func (h *hub) overrun(s *subscriber) {
	s.cut = connect.NewError(connect.CodeResourceExhausted, fmt.Errorf(
		"subscriber lost output bytes %d to %d: it fell more than %d bytes behind after other subscribers that read nothing for %s had used up this process's stall budget, so the process was not held for it; reconnect to resume from the replay buffer",
		s.cursor, h.start, h.window, h.stall))
	delete(h.subs, s)
}

// trim drops output that is neither in the replay window nor unread by a
// subscriber. Called with h.mu held.
func (h *hub) trim() {
	keep := h.end - h.replay
	for s := range h.subs {
		if s.cursor < keep && !s.detached {
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
	s := &subscriber{h: h, cursor: h.end, lastRead: time.Now(), waitMark: h.waited}
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
	h.changedLocked()
}

// changedLocked wakes whatever waits for output or the end: the waiters
// on changed and the parked subscribers. Called with h.mu held.
func (h *hub) changedLocked() {
	close(h.changed)
	h.changed = make(chan struct{})
	for s := range h.subs {
		if f := s.onChange; f != nil {
			s.onChange = nil
			f()
		}
	}
}

// parkUntil has fn run once when wait (from next) is closed, at once if
// it already is or the subscriber was cut off. fn runs under the hub's lock, so it must only start
// work, never call into the hub.
func (s *subscriber) parkUntil(wait <-chan struct{}, fn func()) {
	h := s.h
	h.mu.Lock()
	defer h.mu.Unlock()
	// Cut off or gone, it is told at once: its next call of next says so.
	if _, ok := h.subs[s]; !ok || wait != h.changed {
		fn()
		return
	}
	s.onChange = fn
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
	if s.cursor < h.start {
		h.overrun(s)
		return nil, nil, s.cut, nil
	}
	s.detached = false
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
		s.waitMark = h.waited
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
