package backend

import (
	"errors"
	"io"
	"sync"
)

// errPipeClosed is what the writer sees once the consumer closed its end.
var errPipeClosed = errors.New("output pipe closed by its reader")

// outputPipe carries one piped output stream to the caller. It buffers at
// most limit bytes; beyond that the writer (the stream pump) blocks, which
// is the seam's backpressure. Closing the read side, or aborting the pipe
// when termination is requested, releases a blocked writer.
type outputPipe struct {
	mu         sync.Mutex
	cond       *sync.Cond
	buf        []byte
	limit      int
	eof        error // set when the writer is done: io.EOF or the failure
	readerGone bool
}

func newOutputPipe(limit int) *outputPipe {
	p := &outputPipe{limit: limit}
	p.cond = sync.NewCond(&p.mu)
	return p
}

func (p *outputPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) == 0 && p.eof == nil && !p.readerGone {
		p.cond.Wait()
	}
	if p.readerGone {
		return 0, io.ErrClosedPipe
	}
	if len(p.buf) == 0 {
		return 0, p.eof
	}
	n := copy(b, p.buf)
	p.buf = p.buf[n:]
	if len(p.buf) == 0 {
		p.buf = nil
	}
	p.cond.Broadcast()
	return n, nil
}

// Close is the consumer giving up: later output is discarded.
func (p *outputPipe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readerGone = true
	p.buf = nil
	p.cond.Broadcast()
	return nil
}

// write queues b, blocking while the window is full.
func (p *outputPipe) write(b []byte) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf) >= p.limit && !p.readerGone && p.eof == nil {
		p.cond.Wait()
	}
	if p.readerGone {
		return errPipeClosed
	}
	if p.eof != nil {
		return p.eof
	}
	p.buf = append(p.buf, b...)
	p.cond.Broadcast()
	return nil
}

// finish ends the stream: readers drain what is queued, then get err
// (io.EOF for a normal end).
func (p *outputPipe) finish(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eof == nil {
		p.eof = err
	}
	p.cond.Broadcast()
}

// abort ends the stream now, dropping anything queued.
func (p *outputPipe) abort(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.eof == nil {
		p.eof = err
	}
	p.buf = nil
	p.cond.Broadcast()
}
