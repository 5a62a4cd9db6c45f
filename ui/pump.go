package ui

import (
	"bytes"
	"io"
	"sync"
)

// maxPending bounds what a pump holds between two frames. A flood beyond it
// keeps the newest bytes: the operator sees the present instead of a screen
// that lags further behind every second.
const maxPending = 1 << 20

// pump reads one stream on its own goroutine and holds what it read until
// the model takes it on the next frame. It never touches the model.
type pump struct {
	mu      sync.Mutex
	buf     []byte
	dropped int64
	done    bool
	err     error
	wake    chan<- struct{}
	// sink, when set, receives the bytes instead of the buffer (a vt.Term,
	// which parses on its own goroutine and signals its own changes).
	sink io.Writer
}

func startPump(r io.Reader, wake chan<- struct{}, sink io.Writer) *pump {
	p := &pump{wake: wake, sink: sink}
	go p.run(r)
	return p
}

func (p *pump) run(r io.Reader) {
	chunk := make([]byte, 32<<10)
	for {
		n, err := r.Read(chunk)
		if n > 0 && p.sink != nil {
			_, _ = p.sink.Write(chunk[:n])
			n = 0
		}
		p.mu.Lock()
		if n > 0 {
			p.buf = append(p.buf, chunk[:n]...)
			if len(p.buf) > maxPending {
				p.keepTail()
			}
		}
		if err != nil {
			p.done = true
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
}

func (p *pump) notify() {
	select {
	case p.wake <- struct{}{}:
	default: // a frame is already due
	}
}

// take returns what was read since the last take, and whether the stream
// has ended.
func (p *pump) take() (data []byte, dropped int64, done bool, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	data, p.buf = p.buf, nil
	dropped, p.dropped = p.dropped, 0
	return data, dropped, p.done, p.err
}
