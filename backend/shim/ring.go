package shim

import (
	"sandtop/wrapper"

	"errors"
	"io"
	"os"
)

// ring keeps the output a program writes while no daemon reads, in two
// files of frames (see ReadFrame): the current one and the one before it.
// When the current file would pass half the bound it replaces the older one,
// so the pair never holds more than the bound and always the newest output,
// in whole frames.
type ring struct {
	dir   *StateDir
	half  int64
	cur   *os.File
	size  int64
	fails int // write errors seen (a full disk): the bytes are dropped
}

func newRing(dir *StateDir, bound int64) *ring {
	return &ring{dir: dir, half: max(bound/2, 4096)}
}

func (r *ring) append(kind byte, data []byte) {
	for len(data) > 0 {
		n := min(int64(len(data)), r.half-5)
		r.appendFrame(kind, data[:n])
		data = data[n:]
	}
}

func (r *ring) appendFrame(kind byte, data []byte) {
	frame := int64(len(data)) + 5
	if r.cur != nil && r.size+frame > r.half {
		_ = r.cur.Close()
		r.cur = nil
		if r.dir.Rename(wrapper.RingFile, wrapper.RingFile+".1") != nil {
			r.fails++
		}
	}
	if r.cur == nil {
		_ = r.dir.Remove(wrapper.RingFile)
		f, err := r.dir.Create(wrapper.RingFile)
		if err != nil {
			r.fails++
			return
		}
		r.cur, r.size = f, 0
	}
	if err := WriteFrame(r.cur, kind, data); err != nil {
		r.fails++
	}
	r.size += frame
}

// drainTo sends every kept frame to w, oldest first, and empties the ring.
func (r *ring) drainTo(w io.Writer) error {
	if r.cur != nil {
		_ = r.cur.Close()
		r.cur = nil
	}
	for _, name := range []string{wrapper.RingFile + ".1", wrapper.RingFile} {
		f, err := r.dir.Open(name)
		if err != nil {
			continue
		}
		err = copyFrames(f, w)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	_ = r.dir.Remove(wrapper.RingFile + ".1")
	_ = r.dir.Remove(wrapper.RingFile)
	return nil
}

// copyFrames copies whole output frames; a torn last frame is dropped.
func copyFrames(f *os.File, w io.Writer) error {
	for {
		kind, b, err := ReadFrame(f)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				return nil
			}
			return nil // unreadable: what was sent is all there is
		}
		if kind != FrameStdout && kind != FrameStderr {
			return nil
		}
		if err := WriteFrame(w, kind, b); err != nil {
			return err
		}
	}
}
