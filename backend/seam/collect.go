package seam

import (
	"sync"
	"unicode/utf8"
)

// Read is one read of a collected stream.
type Read struct {
	// Text is Bytes decoded as UTF-8; a slice that starts or ends inside a
	// character shows U+FFFD for each byte of the broken sequence.
	Text string
	// Bytes is the exact retained slice.
	Bytes []byte
	// NextOffset is the number of bytes the stream has produced so far.
	NextOffset int64
	// Lossy is true when the requested offset is older than the first
	// retained byte; Bytes is then the whole retained tail.
	Lossy bool
	// SpillPath is set only on a lossy read, once the stream has ended, and
	// only while the spill file in the sandbox holds the complete stream.
	SpillPath string
}

// OutputReader keeps the last maxBytes of a stream, byte-exact, addressed
// by whole-stream offsets. Reads never consume, so independent cursors do
// not steal each other's data, and the reader stays readable after the
// process settles. Safe for concurrent use.
type OutputReader struct {
	mu    sync.Mutex
	max   int64
	ring  []byte // grows up to max, then wraps
	start int    // index of the oldest retained byte in ring
	n     int    // retained bytes
	total int64

	spillPath  string
	spillMax   int64 // 0: no spill
	spillValid bool  // the file is sealed and complete
}

func newOutputReader(maxBytes int64, spillPath string, spillMax int64) *OutputReader {
	return &OutputReader{max: maxBytes, spillPath: spillPath, spillMax: spillMax}
}

// append adds stream bytes, dropping the oldest beyond max.
func (r *OutputReader) append(p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	if int64(len(p)) >= r.max {
		p = p[int64(len(p))-r.max:]
		r.grow(int(r.max))
		copy(r.ring, p)
		r.start, r.n = 0, len(p)
		return
	}
	if need := r.n + len(p); need > len(r.ring) && len(r.ring) < int(r.max) {
		r.grow(min(int(r.max), max(need, 2*len(r.ring), 4096)))
	}
	for len(p) > 0 {
		end := (r.start + r.n) % len(r.ring)
		if r.n == len(r.ring) { // full: overwrite the oldest
			c := copy(r.ring[r.start:], p)
			if c > len(r.ring)-r.start {
				c = len(r.ring) - r.start
			}
			p = p[c:]
			r.start = (r.start + c) % len(r.ring)
			continue
		}
		limit := len(r.ring)
		if end < r.start {
			limit = r.start
		}
		c := copy(r.ring[end:limit], p)
		p = p[c:]
		r.n += c
	}
}

// grow reallocates the ring to size, linearizing the retained bytes.
func (r *OutputReader) grow(size int) {
	if size <= len(r.ring) {
		return
	}
	fresh := make([]byte, size)
	r.copyRetained(fresh)
	r.ring, r.start = fresh, 0
}

func (r *OutputReader) copyRetained(dst []byte) int {
	if r.n == 0 {
		return 0
	}
	first := min(r.n, len(r.ring)-r.start)
	copy(dst, r.ring[r.start:r.start+first])
	copy(dst[first:], r.ring[:r.n-first])
	return r.n
}

// ReadFrom returns the stream from byte offset from onwards, as far as it is
// retained.
func (r *OutputReader) ReadFrom(from int64) Read {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := Read{NextOffset: r.total}
	first := r.total - int64(r.n)
	skip := int64(0)
	switch {
	case from >= r.total:
		return out
	case from < first:
		out.Lossy = true
		if r.spillValid && r.total <= r.spillMax {
			out.SpillPath = r.spillPath
		}
	default:
		skip = from - first
	}
	all := make([]byte, r.n)
	r.copyRetained(all)
	out.Bytes = all[skip:]
	out.Text = decodeUTF8(out.Bytes)
	return out
}

// Total is the number of bytes the stream has produced so far.
func (r *OutputReader) Total() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.total
}

// sealSpill is called once the stream has ended; it decides whether the
// spill file holds the complete stream and may be advertised, and returns
// the path to delete when it may not (or is not needed).
func (r *OutputReader) sealSpill(drainExpired bool) (remove string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.spillMax == 0 {
		return ""
	}
	if drainExpired || r.total <= r.max || r.total > r.spillMax {
		r.spillValid = false
		return r.spillPath
	}
	r.spillValid = true
	return ""
}

// decodeUTF8 decodes b, writing U+FFFD for every byte that is not part of a
// valid sequence.
func decodeUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]rune, 0, len(b))
	for len(b) > 0 {
		c, size := utf8.DecodeRune(b)
		out = append(out, c)
		b = b[size:]
	}
	return string(out)
}
