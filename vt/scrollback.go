package vt

import (
	"io"
	"sync"
)

// Scrollback is a bounded ring of the raw bytes a terminal produced. It
// records, while bytes are written, offsets where a replay may safely
// begin (never inside an escape sequence or a UTF-8 character) and
// anchors (clear screen, alternate-screen switch, reset) after which the
// screen can be rebuilt from scratch. Offsets are absolute: the number of
// bytes written before that point. It is safe for concurrent use.
type Scrollback struct {
	mu   sync.Mutex
	buf  []byte
	end  int64 // absolute offset of the next byte
	sc   scanner
	safe offsetRing
	anch offsetRing
	gran int64
}

// DefaultScrollback is the ring size NewTerm uses when none is given.
const DefaultScrollback = 1 << 20

// NewScrollback returns a ring holding the last capacity bytes.
func NewScrollback(capacity int) *Scrollback {
	if capacity < 1024 {
		capacity = 1024
	}
	gran := int64(capacity / 1024)
	if gran < 64 {
		gran = 64
	}
	s := &Scrollback{buf: make([]byte, capacity), gran: gran}
	s.safe.push(0)
	return s
}

// Write appends p, overwriting the oldest bytes when full. It never fails.
func (s *Scrollback) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(p)
	s.sc.scan(p, s.end, (*scanSink)(s))
	c := int64(len(s.buf))
	q := p
	if int64(len(q)) > c {
		q = q[int64(len(q))-c:]
	}
	pos := (s.end + int64(n-len(q))) % c
	k := copy(s.buf[pos:], q)
	copy(s.buf, q[k:])
	s.end += int64(n)
	start := s.startLocked()
	s.safe.dropBefore(start)
	s.anch.dropBefore(start)
	return n, nil
}

// scanSink receives scanner events for a Scrollback whose lock is held.
type scanSink Scrollback

func (s *scanSink) safePoint(off int64, lineStart bool) {
	last := s.safe.last()
	d := off - last
	// Keep line starts every gran bytes; other safe points only when the
	// stream has gone long without a newline.
	if (lineStart && d >= s.gran) || d >= 8*s.gran {
		s.safe.push(off)
	}
}

// maxAnchors bounds the anchor queue; only the newest ones are used.
const maxAnchors = 64

func (s *scanSink) anchor(off int64) {
	s.anch.push(off)
	if s.anch.len() > maxAnchors {
		s.anch.head++
	}
	if off-s.safe.last() >= s.gran {
		s.safe.push(off)
	}
}

func (s *Scrollback) startLocked() int64 {
	if st := s.end - int64(len(s.buf)); st > 0 {
		return st
	}
	return 0
}

// Cap returns the capacity in bytes.
func (s *Scrollback) Cap() int { return len(s.buf) }

// Start returns the offset of the oldest byte still held.
func (s *Scrollback) Start() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

// End returns the total number of bytes written.
func (s *Scrollback) End() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.end
}

// SafeStart returns the oldest safe offset still held, or End when none
// is (only after a flood of bytes that never returned to ground state).
func (s *Scrollback) SafeStart() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.safe.len() == 0 {
		return s.end
	}
	return s.safe.at(0)
}

// SafeAfter returns the first safe offset at or after off.
func (s *Scrollback) SafeAfter(off int64) (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.safe.firstAtOrAfter(off)
}

// LastAnchor returns the newest anchor offset, if one is held.
func (s *Scrollback) LastAnchor() (int64, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.anch.len() == 0 {
		return 0, false
	}
	return s.anch.last(), true
}

// AppendRange appends the held bytes in [from, to) to dst; the range is
// clipped to what is held.
func (s *Scrollback) AppendRange(dst []byte, from, to int64) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st := s.startLocked(); from < st {
		from = st
	}
	if to > s.end {
		to = s.end
	}
	c := int64(len(s.buf))
	for from < to {
		pos := from % c
		n := min(to-from, c-pos)
		dst = append(dst, s.buf[pos:pos+n]...)
		from += n
	}
	return dst
}

// Replay writes everything held from the oldest safe offset to w, in
// chunks, and returns the offset it stopped at.
func (s *Scrollback) Replay(w io.Writer) (int64, error) {
	from, to := s.SafeStart(), s.End()
	buf := make([]byte, 0, 32<<10)
	for from < to {
		next := min(from+32<<10, to)
		buf = s.AppendRange(buf[:0], from, next)
		if _, err := w.Write(buf); err != nil {
			return from, err
		}
		from = next
	}
	return to, nil
}

// offsetRing is a queue of increasing offsets.
type offsetRing struct {
	v    []int64
	head int
}

func (r *offsetRing) len() int       { return len(r.v) - r.head }
func (r *offsetRing) at(i int) int64 { return r.v[r.head+i] }

func (r *offsetRing) last() int64 {
	if r.len() == 0 {
		return -1 << 62
	}
	return r.v[len(r.v)-1]
}

func (r *offsetRing) push(off int64) {
	if r.len() > 0 && r.last() >= off {
		return
	}
	if r.head > 0 && r.head >= len(r.v)/2 {
		r.v = append(r.v[:0], r.v[r.head:]...)
		r.head = 0
	}
	r.v = append(r.v, off)
}

func (r *offsetRing) dropBefore(off int64) {
	for r.len() > 0 && r.v[r.head] < off {
		r.head++
	}
}

func (r *offsetRing) firstAtOrAfter(off int64) (int64, bool) {
	lo, hi := r.head, len(r.v)
	for lo < hi {
		m := (lo + hi) / 2
		if r.v[m] < off {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(r.v) {
		return r.v[lo], true
	}
	return 0, false
}
