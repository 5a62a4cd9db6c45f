package ui

import (
	"bytes"
	"io"
	"sync"
	"time"
)

// maxPending bounds what a pump holds between two frames. A flood beyond it
// keeps the newest bytes: the operator sees the present instead of a screen
// that lags further behind every second.
const maxPending = 1 << 20

// pump reads one stream on its own goroutine and holds what it read until
// the model takes it on the next frame. It never touches the model.
type pump struct {
	mu  sync.Mutex
	buf []byte
	// times says when the bytes of buf arrived in the sandbox: each entry
	// holds from its offset to the next one's (zero: not known).
	times   []pieceTime
	dropped int64
	done    bool
	err     error
	wake    chan<- struct{}
	// sink, when set, receives the bytes instead of the buffer (a vt.Term,
	// which parses on its own goroutine and signals its own changes).
	sink io.Writer
	// afterEnd, when set, is asked once the stream has ended, before the
	// pump says so, when the group's command ended (see endedAt).
	afterEnd func() time.Time
	ended    time.Time
}

// pieceTime is the arrival time of the bytes of a pump's buffer from off on.
type pieceTime struct {
	off int
	at  time.Time
}

// startPump follows a terminal's bytes into sink.
func startPump(r io.Reader, wake chan<- struct{}, sink io.Writer) *pump {
	p := &pump{wake: wake, sink: sink}
	go p.run(ReaderStream(io.NopCloser(r)))
	return p
}

// startOutputPump follows a group's output, keeping its pieces' times;
// afterEnd (may be nil) reads when the group's command ended, once the
// output has.
func startOutputPump(s OutputStream, wake chan<- struct{}, afterEnd func() time.Time) *pump {
	p := &pump{wake: wake, afterEnd: afterEnd}
	go p.run(s)
	return p
}

func (p *pump) run(s OutputStream) {
	for {
		piece, err := s.Next()
		var ended time.Time
		if err == io.EOF && p.afterEnd != nil {
			ended = p.afterEnd()
		}
		data := piece.Data
		if len(data) > 0 && p.sink != nil {
			_, _ = p.sink.Write(data)
			data = nil
		}
		p.mu.Lock()
		if len(data) > 0 {
			if n := len(p.times); n == 0 || !p.times[n-1].at.Equal(piece.At) {
				p.times = append(p.times, pieceTime{off: len(p.buf), at: piece.At})
			}
			p.buf = append(p.buf, data...)
			if len(p.buf) > maxPending {
				p.keepTail()
			}
		}
		if err != nil {
			p.done, p.ended = true, ended
			if err != io.EOF {
				p.err = err
			}
		}
		p.mu.Unlock()
		if p.sink == nil || err != nil {
			p.notify()
		}
		if err != nil {
			return
		}
	}
}

// keepTail drops the oldest bytes, cutting at an escape or newline so the
// emulator does not start in the middle of a sequence.
func (p *pump) keepTail() {
	cut := len(p.buf) - maxPending/2
	if i := bytes.IndexAny(p.buf[cut:], "\x1b\n"); i >= 0 {
		cut += i
	}
	p.dropped += int64(cut)
	p.buf = append([]byte(nil), p.buf[cut:]...)
	// The time of the piece the cut falls in holds from the new start.
	keep := 0
	for keep+1 < len(p.times) && p.times[keep+1].off <= cut {
		keep++
	}
	p.times = append([]pieceTime(nil), p.times[keep:]...)
	for i := range p.times {
		p.times[i].off = max(0, p.times[i].off-cut)
	}
}

func (p *pump) notify() {
	select {
	case p.wake <- struct{}{}:
	default: // a frame is already due
	}
}

// take returns what was read since the last take with its times, and
// whether the stream has ended.
func (p *pump) take() (data []byte, times []pieceTime, dropped int64, done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, p.buf = p.buf, nil
	times, p.times = p.times, nil
	dropped, p.dropped = p.dropped, 0
	return data, times, dropped, p.done, p.err
}

// endedAt is when the group's command ended, as afterEnd read it once the
// stream ended; zero before, or when not known.
func (p *pump) endedAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}
