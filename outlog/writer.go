package outlog

import (
	"io"
	"math"
	"sync"
	"time"
)

// Writer appends marks for a group's supervisor. Both streams' pumps share
// one; each calls Add after its piece is in the spill.
type Writer struct {
	mu   sync.Mutex
	w    io.Writer
	left int64
	buf  []byte
	err  error
	now  func() time.Time
}

// NewWriter writes the header to w (a new, empty file) and returns the
// writer of its marks.
func NewWriter(w io.Writer) (*Writer, error) {
	if _, err := w.Write(header()); err != nil {
		return nil, err
	}
	return &Writer{w: w, left: MaxMarksSize - HeaderSize, now: time.Now}, nil
}

// Add marks n more bytes of s's spill as arrived now. After a write error
// (a full disk) or once the file is full, marks are no longer kept; the
// spill reads on without times from there.
func (w *Writer) Add(s Stream, n int) {
	if w == nil || n <= 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for n > 0 && w.err == nil && w.left >= MarkSize {
		piece := min(n, math.MaxUint32)
		w.buf = appendMark(w.buf[:0], Mark{Stream: s, Len: uint32(piece), At: w.now()})
		if _, err := w.w.Write(w.buf); err != nil {
			w.err = err
			return
		}
		w.left -= MarkSize
		n -= piece
	}
}
