package terminal

import (
	"io"
	"sync"
)

// DefaultOutputBuffer bounds the bytes a Terminal queues for a
// consumer that reads slower than the program writes.
const DefaultOutputBuffer = 1 << 20

// terminalOutput is the Terminal's Output: a bounded queue between the RPC
// stream and the consumer. The producer never blocks, so a slow consumer can
// stall neither the daemon's fan-out nor the handle's exit detection. When
// the queue is full the oldest bytes are dropped and counted: a terminal
// pane only needs the newest screen, and the daemon's replay ring is the
// way to recover history.
type terminalOutput struct {
	mu      sync.Mutex
	ready   *sync.Cond
	buf     []byte
	limit   int
	dropped int64
	done    bool
	err     error
}

func newTerminalOutput(limit int) *terminalOutput {
	o := &terminalOutput{limit: limit}
	o.ready = sync.NewCond(&o.mu)
	return o
}

// push queues p, dropping the oldest queued bytes beyond the limit. Bytes
// pushed after close are discarded.
func (o *terminalOutput) push(p []byte) {
	if len(p) == 0 {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	if over := len(o.buf) + len(p) - o.limit; over > 0 {
		o.dropped += int64(over)
		if over >= len(o.buf) {
			p = p[over-len(o.buf):]
			o.buf = o.buf[:0]
		} else {
			// Compact so the backing array does not creep forward for ever.
			o.buf = append(o.buf[:0], o.buf[over:]...)
		}
	}
	o.buf = append(o.buf, p...)
	o.ready.Broadcast()
}

// close ends the stream after the queued bytes: with io.EOF when err is nil,
// otherwise with err. Only the first close counts.
func (o *terminalOutput) close(err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.done {
		return
	}
	o.done, o.err = true, err
	o.ready.Broadcast()
}

// Read blocks until bytes are queued or the stream has ended.
func (o *terminalOutput) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for len(o.buf) == 0 && !o.done {
		o.ready.Wait()
	}
	if len(o.buf) == 0 {
		if o.err != nil {
			return 0, o.err
		}
		return 0, io.EOF
	}
	n := copy(p, o.buf)
	o.buf = o.buf[n:]
	if len(o.buf) == 0 {
		o.buf = o.buf[:0:0]
	}
	return n, nil
}

// droppedBytes is how many bytes a slow consumer has lost so far.
func (o *terminalOutput) droppedBytes() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.dropped
}
