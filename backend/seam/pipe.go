package seam

import (
	"errors"
	"io"
	"sync"

	"sandtop/backend/envd"
)

// errPipeClosed is what the writer sees once the consumer closed its end.
var errPipeClosed = errors.New("output pipe closed by its reader")

// outputPipe carries one piped output stream to the caller. It queues the
// stream's chunks as they came (each owned by the pipe, never copied into
// a common buffer) and holds at most limit bytes queued; beyond that the
// writer (the stream pump) blocks, which is the seam's backpressure.
// Closing the read side, or aborting the pipe when termination is
// requested, releases a blocked writer.
type outputPipe struct {
	mu         sync.Mutex
	cond       *sync.Cond
	chunks     [][]byte // queued output, oldest first; chunks[0] may be partly read
	queued     int      // bytes in chunks
	limit      int
	eof        error // set when the writer is done: io.EOF or the failure
	readerGone bool
}

func newOutputPipe(limit int) *outputPipe {
	p := &outputPipe{limit: limit}
	p.cond = sync.NewCond(&p.mu)
	return p
}

// wait blocks until there is output, an end, or no reader. Called with
// p.mu held.
func (p *outputPipe) wait() {
	for len(p.chunks) == 0 && p.eof == nil && !p.readerGone {
		p.cond.Wait()
	}
}

func (p *outputPipe) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.wait()
	if p.readerGone {
		return 0, io.ErrClosedPipe
	}
	if len(p.chunks) == 0 {
		return 0, p.eof
	}
	n := 0
	for n < len(b) && len(p.chunks) > 0 {
		c := copy(b[n:], p.chunks[0])
		n += c
		if c == len(p.chunks[0]) {
			p.chunks[0] = nil
			p.chunks = p.chunks[1:]
		} else {
			p.chunks[0] = p.chunks[0][c:]
		}
	}
	p.queued -= n
	p.cond.Broadcast()
	return n, nil
}

// WriteTo hands the queued chunks to w as they are, without copying them
// into the caller's buffer (io.Copy uses it). The queue is taken whole, so
// the stream may fill the window again while w writes.
func (p *outputPipe) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		p.mu.Lock()
		p.wait()
		if p.readerGone {
			p.mu.Unlock()
			return total, io.ErrClosedPipe
		}
		if len(p.chunks) == 0 {
			err := p.eof
			p.mu.Unlock()
			if err == io.EOF {
				err = nil
			}
			return total, err
		}
		batch := p.chunks
		p.chunks, p.queued = nil, 0
		p.cond.Broadcast()
		p.mu.Unlock()
		for _, c := range batch {
			n, err := w.Write(c)
			total += int64(n)
			if err != nil {
				return total, err
			}
			// A Writer keeps nothing it was given, and the chunk was the
			// pipe's alone.
			envd.RecycleOutput(c)
		}
	}
}

// Close is the consumer giving up: later output is discarded.
func (p *outputPipe) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readerGone = true
	p.chunks, p.queued = nil, 0
	p.cond.Broadcast()
	return nil
}

// write queues b, blocking while the window is full. The pipe owns b from
// then on: the caller must not modify it.
func (p *outputPipe) write(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.queued >= p.limit && !p.readerGone && p.eof == nil {
		p.cond.Wait()
	}
	if p.readerGone {
		return errPipeClosed
	}
	if p.eof != nil {
		return p.eof
	}
	p.chunks = append(p.chunks, b)
	p.queued += len(b)
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
	p.chunks, p.queued = nil, 0
	p.cond.Broadcast()
}
