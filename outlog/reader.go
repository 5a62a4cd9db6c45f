package outlog

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"
)

// ErrSpillGone says marks record output whose spill file is no longer
// there (pruned, or removed by hand): what was kept is lost, which a
// reader must say rather than print nothing.
var ErrSpillGone = errors.New("the output file is gone")

// Source reads a file of the sandbox in bounded pieces: the control
// plane's ReadRange. A missing file is an error that IsNotFound reports.
type Source interface {
	ReadRange(ctx context.Context, path string, offset int64, length int) (data []byte, size int64, err error)
}

// Segment is a piece of output: which stream, when it arrived (zero when
// not known: a spill without marks, or past them), and its bytes.
type Segment struct {
	Stream Stream
	At     time.Time
	Data   []byte
}

// Reader reads a group's output back in arrival order from its state
// directory: the spills, merged by their marks. It keeps its place, so
// calling Next again as the group writes returns only what is new (logs -f).
type Reader struct {
	src        Source
	isNotFound func(error) bool
	spills     [2]string // by Stream-1
	marksPath  string
	chunk      int

	// mode: 0 not known yet, 1 marked, 2 no marks (an older layout).
	mode     int
	marksOff int64 // how far the marks file has been read
	pending  []Mark
	consumed [2]int64 // bytes of each spill handed out
	buf      [2][]byte
	bufOff   [2]int64 // spill offset of buf[i][0]
	found    [2]bool  // the spill exists
	missing  [2]bool  // the last read of the spill found no file
	marksBad bool     // the marks stopped making sense: read on without them
}

// NewReader reads the output kept in stateDir (a path in the sandbox).
// chunk bounds each read (the control plane's MaxReadRange);
// isNotFound tells a missing file from a failure.
func NewReader(src Source, stateDir string, stdoutName, stderrName string, chunk int, isNotFound func(error) bool) *Reader {
	return &Reader{src: src, isNotFound: isNotFound, chunk: chunk,
		spills:    [2]string{path.Join(stateDir, stdoutName), path.Join(stateDir, stderrName)},
		marksPath: path.Join(stateDir, File)}
}

// Marked reports whether the output has arrival marks (known once Next
// has found any output).
func (r *Reader) Marked() bool { return r.mode == 1 }

// Found reports whether any spill file was found.
func (r *Reader) Found() bool { return r.found[0] || r.found[1] }

// Next returns the output that is new since the last call, in arrival
// order, about chunk bytes at most; none when there is nothing new. With
// final (the group has no live member left, so nothing more will come),
// it also returns what no mark covers, stdout's before stderr's.
func (r *Reader) Next(ctx context.Context, final bool) ([]Segment, error) {
	if err := r.Probe(ctx); err != nil {
		return nil, err
	}
	if r.mode == 0 {
		return nil, nil // nothing kept yet
	}
	var out []Segment
	if r.mode == 1 && !r.marksBad {
		if len(r.pending) == 0 {
			if err := r.readMarks(ctx); err != nil {
				return nil, err
			}
			if len(r.pending) == 0 && r.marksOff >= MaxMarksSize {
				// The marks file is full: the rest comes untimed, as it
				// is written, not only once the group is over.
				r.marksBad = true
			}
		}
		n := 0
		for len(r.pending) > 0 && n < r.chunk {
			m := r.pending[0]
			i := int(m.Stream) - 1
			data, err := r.take(ctx, i, int64(m.Len))
			if err != nil {
				return out, err
			}
			if len(data) == 0 && m.Len > 0 && r.missing[i] {
				return out, fmt.Errorf("%s: %w, though its marks record %d bytes", r.spills[i], ErrSpillGone, m.Len)
			}
			if int64(len(data)) < int64(m.Len) {
				// The spill holds less than its marks say (cut short by a
				// full disk): what is there is all there is.
				if len(data) > 0 {
					out = append(out, Segment{Stream: m.Stream, At: m.At, Data: data})
				}
				r.marksBad = true
				break
			}
			out = append(out, Segment{Stream: m.Stream, At: m.At, Data: data})
			n += len(data)
			r.pending = r.pending[1:]
		}
		if len(out) > 0 || !final && !r.marksBad {
			return out, nil
		}
	}
	if r.mode == 2 || final || r.marksBad {
		// Unmarked: each spill from where it was left, stdout first.
		for i := range 2 {
			data, err := r.take(ctx, i, int64(r.chunk))
			if err != nil {
				return nil, err
			}
			if len(data) > 0 {
				return []Segment{{Stream: Stream(i + 1), Data: data}}, nil
			}
		}
	}
	return nil, nil
}

// Probe looks for the kept output without reading it: afterwards Found
// and Marked say what there is.
func (r *Reader) Probe(ctx context.Context) error {
	if r.mode != 0 {
		return nil
	}
	return r.decideMode(ctx)
}

// decideMode looks for the marks file, and if there is none, for the
// spills: a spill without marks is an older layout. The supervisor creates
// the marks file before the spills, so a spill found after the marks were
// missed means there are none.
func (r *Reader) decideMode(ctx context.Context) error {
	_, _, err := r.src.ReadRange(ctx, r.marksPath, 0, HeaderSize)
	if err == nil {
		r.mode, r.found = 1, [2]bool{true, true} // the spills come with it
		return nil
	}
	if !r.isNotFound(err) {
		return err
	}
	for i := range 2 {
		_, _, err := r.src.ReadRange(ctx, r.spills[i], 0, 1)
		switch {
		case err == nil:
			r.found[i] = true
		case !r.isNotFound(err):
			return err
		}
	}
	if !r.Found() {
		return nil
	}
	if _, _, err := r.src.ReadRange(ctx, r.marksPath, 0, HeaderSize); err == nil {
		r.mode, r.found = 1, [2]bool{true, true}
		return nil
	}
	r.mode = 2
	return nil
}

// readMarks reads the marks written since the last read.
func (r *Reader) readMarks(ctx context.Context) error {
	length := r.chunk - r.chunk%MarkSize
	b, _, err := r.src.ReadRange(ctx, r.marksPath, r.marksOff, length)
	if err != nil {
		if r.isNotFound(err) {
			return nil // removed (pruned): nothing more
		}
		return fmt.Errorf("read %s: %w", r.marksPath, err)
	}
	if r.marksOff == 0 {
		if len(b) < HeaderSize {
			return nil // being written
		}
		if err := checkHeader(b); err != nil {
			r.marksBad = true
			return nil
		}
		b, r.marksOff = b[HeaderSize:], HeaderSize
	}
	b = b[:len(b)-len(b)%MarkSize] // a torn last mark waits for the rest
	marks, err := decodeMarks(b)
	r.marksOff += int64(len(marks) * MarkSize)
	r.pending = append(r.pending, marks...)
	if err != nil {
		r.marksBad = true
	}
	return nil
}

// take returns up to n bytes of spill i from where it was last taken,
// reading it a chunk at a time; fewer when the spill holds no more now.
func (r *Reader) take(ctx context.Context, i int, n int64) ([]byte, error) {
	var out []byte
	for n > 0 {
		at := r.consumed[i] - r.bufOff[i]
		if avail := int64(len(r.buf[i])) - at; avail > 0 {
			k := min(avail, n)
			out = append(out, r.buf[i][at:at+k]...)
			r.consumed[i] += k
			n -= k
			continue
		}
		b, _, err := r.src.ReadRange(ctx, r.spills[i], r.consumed[i], r.chunk)
		if err != nil {
			if r.isNotFound(err) {
				r.missing[i] = true
				return out, nil
			}
			return out, fmt.Errorf("read %s: %w", r.spills[i], err)
		}
		r.found[i], r.missing[i] = true, false
		if len(b) == 0 {
			return out, nil
		}
		r.buf[i], r.bufOff[i] = b, r.consumed[i]
	}
	return out, nil
}

// ReadAll calls each with every segment kept now, in arrival order: the
// whole record of a group that has ended.
func (r *Reader) ReadAll(ctx context.Context, each func(Segment) error) error {
	for {
		segs, err := r.Next(ctx, true)
		if err != nil || len(segs) == 0 {
			return err
		}
		for _, s := range segs {
			if err := each(s); err != nil {
				return err
			}
		}
	}
}
