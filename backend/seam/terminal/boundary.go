package terminal

import "bytes"

// boundaryFilter drops every byte up to and including the private output
// boundary marker, then passes everything after it through unchanged. It
// holds back at most len(marker)-1 bytes, so a marker split across chunks
// is still found.
type boundaryFilter struct {
	marker  []byte
	pending []byte
	passed  bool
}

func newBoundaryFilter(marker string) *boundaryFilter {
	return &boundaryFilter{marker: []byte(marker)}
}

// feed returns the part of p that belongs to the requested program. The
// returned slice may alias p.
func (f *boundaryFilter) feed(p []byte) []byte {
	if f.passed {
		return p
	}
	f.pending = append(f.pending, p...)
	if i := bytes.Index(f.pending, f.marker); i >= 0 {
		f.passed = true
		out := f.pending[i+len(f.marker):]
		f.pending = nil
		return out
	}
	if keep := len(f.marker) - 1; len(f.pending) > keep {
		f.pending = append(f.pending[:0], f.pending[len(f.pending)-keep:]...)
	}
	return nil
}

// flush drops what is held back: bytes before the boundary never belong to
// the program.
func (f *boundaryFilter) flush() []byte {
	f.pending = nil
	return nil
}

// passedBoundary reports whether the boundary has been seen.
func (f *boundaryFilter) passedBoundary() bool { return f.passed }
