package uisource

import (
	"context"
	"io"
	"sync"
	"time"

	"sandtop/outlog"
	"sandtop/ui"
)

// keptPoll is how often a kept output is read again for what is new;
// about the pace of 'logs -f'. On a stock envd every read and liveness
// check runs a command in the sandbox, so there it is read less often.
const (
	keptPoll       = 200 * time.Millisecond
	keptPollCompat = time.Second
)

// keptBudget is the most kept output a pane reads back from the start:
// more than the pane holds, and slow to read from a remote sandbox. A
// group that kept more is shown from the daemon's replay instead.
const keptBudget = 16 << 20

// liveHeld bounds what the live stream holds between two reads.
const liveHeld = 1 << 20

// spillFull is the notice the stream gives when the sandbox stops keeping
// a group's output while the group goes on writing.
const spillFull = "[sandtop: the sandbox keeps no more of this output (its spill is full); what follows is live, times as received]\n"

// keptStream follows the output a group's supervisor keeps in its state
// directory with arrival marks: every piece carries the time it arrived
// in the sandbox, the replayed ones too. It reads in bounded pieces and
// ends once the group has no live member and all it kept is read.
//
// Beside it the daemon's live stream is drained: once the group writes
// there while nothing more is kept (its spill reached its cap), the
// stream says so and goes on with the live output, untimed.
type keptStream struct {
	ctx    context.Context
	cancel context.CancelFunc
	alive  groupAliver
	pgid   int
	poll   time.Duration
	rd     *outlog.Reader
	segs   []outlog.Segment
	final  bool // the group was seen empty: what is read now is all
	ended  bool

	live   *liveTail // nil: no live stream to fall back on
	keptAt time.Time // when the kept output last grew (or the stream opened)
}

// groupAliver says whether a group still has a live member (the seam's
// Runtime).
type groupAliver interface {
	GroupAlive(ctx context.Context, pgid int) (bool, error)
}

// newKeptStream follows what rd reads. Without alive to ask whether the
// group still runs, the group is known to be over: the stream reads what
// was kept and ends.
func newKeptStream(ctx context.Context, alive groupAliver, pgid int, rd *outlog.Reader, poll time.Duration, live io.ReadCloser) *keptStream {
	ctx, cancel := context.WithCancel(ctx)
	k := &keptStream{ctx: ctx, cancel: cancel, alive: alive, pgid: pgid, rd: rd, poll: poll, keptAt: time.Now(), final: alive == nil}
	if live != nil {
		k.live = startLiveTail(live)
	}
	return k
}

// switchAfter is how long the kept output must lag behind the live one
// before the stream takes the live one: longer than a poll and the
// supervisor's write to its spill.
func (k *keptStream) switchAfter() time.Duration { return 2*time.Second + 2*k.poll }

// Next returns the next kept piece, waiting for the group to write one.
func (k *keptStream) Next() (ui.OutputPiece, error) {
	for {
		if k.live != nil && k.live.switched() {
			return k.live.next(k.ctx)
		}
		if len(k.segs) > 0 {
			seg := k.segs[0]
			k.segs = k.segs[1:]
			return ui.OutputPiece{At: seg.At, Data: seg.Data}, nil
		}
		if k.ended || k.ctx.Err() != nil {
			return ui.OutputPiece{}, io.EOF
		}
		segs, err := k.rd.Next(k.ctx, k.final)
		if err != nil {
			if k.ctx.Err() != nil {
				return ui.OutputPiece{}, io.EOF
			}
			return ui.OutputPiece{}, err
		}
		if len(segs) > 0 {
			k.segs, k.keptAt = segs, time.Now()
			continue
		}
		if k.final {
			k.ended = true
			continue
		}
		// Nothing new. Asked before the next read, so that read sees all
		// an ended group wrote.
		if alive, err := k.alive.GroupAlive(k.ctx, k.pgid); err == nil && !alive {
			k.final = true
			continue
		}
		if k.live != nil && k.live.wroteAfter(k.keptAt.Add(k.switchAfter())) {
			k.live.switchOver()
			return ui.OutputPiece{Data: []byte(spillFull)}, nil
		}
		select {
		case <-k.ctx.Done():
		case <-time.After(k.poll):
		}
	}
}

// Close stops following; nothing in the sandbox is touched.
func (k *keptStream) Close() error {
	k.cancel()
	if k.live != nil {
		_ = k.live.r.Close()
	}
	return nil
}

// liveTail drains a live output stream on its own goroutine. Until the
// switch it only notes when bytes came; after it, it holds them for next.
type liveTail struct {
	r    io.ReadCloser
	wake chan struct{}

	mu   sync.Mutex
	last time.Time // when the last bytes came
	on   bool      // switched over: buf is passed on
	buf  []byte
	err  error
}

func startLiveTail(r io.ReadCloser) *liveTail {
	l := &liveTail{r: r, wake: make(chan struct{}, 1)}
	go l.run()
	return l
}

func (l *liveTail) run() {
	chunk := make([]byte, 32<<10)
	for {
		n, err := l.r.Read(chunk)
		l.mu.Lock()
		if n > 0 {
			l.last = time.Now()
			if l.on {
				l.buf = append(l.buf, chunk[:n]...)
				if len(l.buf) > liveHeld {
					l.buf = append([]byte(nil), l.buf[len(l.buf)-liveHeld/2:]...)
				}
			}
		}
		if err != nil {
			l.err = err
		}
		l.mu.Unlock()
		select {
		case l.wake <- struct{}{}:
		default:
		}
		if err != nil {
			return
		}
	}
}

// wroteAfter says whether live bytes came after t.
func (l *liveTail) wroteAfter(t time.Time) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last.After(t)
}

// switchOver starts holding the live bytes that come from now on; those
// before it were kept, or fell between the two streams.
func (l *liveTail) switchOver() {
	l.mu.Lock()
	l.on = true
	l.mu.Unlock()
}

func (l *liveTail) switched() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.on
}

// next returns the live bytes held, waiting for some; io.EOF at the end.
func (l *liveTail) next(ctx context.Context) (ui.OutputPiece, error) {
	for {
		l.mu.Lock()
		data, err := l.buf, l.err
		l.buf = nil
		l.mu.Unlock()
		if len(data) > 0 {
			return ui.OutputPiece{Data: data}, nil
		}
		if err != nil {
			return ui.OutputPiece{}, err
		}
		select {
		case <-l.wake:
		case <-ctx.Done():
			return ui.OutputPiece{}, io.EOF
		}
	}
}
