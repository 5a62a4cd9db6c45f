package seam

import (
	"bytes"
	"io"
	"sync"
)

// inheritQueueLen bounds the output queued for the host's writers: at most
// this many events (each at most 64 KiB) wait behind a slow writer.
const inheritQueueLen = 16

// inheritQueue writes inherited output to the host's writers from its own
// goroutine, in order. A writer that blocks (host backpressure) paces the
// stream as before, but only until release: after that (the drain bound
// expired, or the stream was stopped) the stream and the outcome go on,
// and further output for the writer is dropped. A write already blocked
// cannot be interrupted; its goroutine ends when the writer returns.
type inheritQueue struct {
	q       chan inheritChunk
	done    chan struct{}
	release <-chan struct{}
	start   sync.Once
	started bool
}

type inheritChunk struct {
	w io.Writer
	p []byte
}

func newInheritQueue(release <-chan struct{}) *inheritQueue {
	return &inheritQueue{q: make(chan inheritChunk, inheritQueueLen), done: make(chan struct{}), release: release}
}

// write queues p for w; it blocks while the queue is full, until release.
// Only the stream's pump calls write and close.
func (iq *inheritQueue) write(w io.Writer, p []byte) {
	iq.start.Do(func() {
		iq.started = true
		go func() {
			defer close(iq.done)
			for c := range iq.q {
				_, _ = c.w.Write(c.p)
			}
		}()
	})
	select {
	case iq.q <- inheritChunk{w, bytes.Clone(p)}:
	case <-iq.release:
	}
}

// close waits until everything queued is written, or until release.
func (iq *inheritQueue) close() {
	if iq == nil || !iq.started {
		return
	}
	close(iq.q)
	select {
	case <-iq.done:
	case <-iq.release:
	}
}
