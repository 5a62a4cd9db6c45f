package daemon

import (
	"bufio"
	"encoding/binary"
	"io"
	"math/bits"
	"sync"

	"sandtop/backend/shim"
)

// Output of a fast stream comes in pieces of tens of KiB to 1 MiB, and
// allocated afresh each piece is garbage a moment later: the daemon spent
// more on clearing, faulting in, collecting and returning that memory than
// on moving the bytes. So a large piece of output is read into a pooled
// buffer (an outBuf), which the hub hands back once neither its log nor
// any subscriber still holds it (see hub.publishPooled). Pieces below
// minPooledOutput are allocated as before: a slow program's small writes
// would otherwise pin a large buffer each in the replay log.
const (
	minPooledShift  = 14 // 16 KiB
	maxPooledShift  = 20 // 1 MiB: shim.MaxOutputFrame
	minPooledOutput = 1 << minPooledShift
)

// outBuf is a pooled output buffer. refs counts its holders (the hub's log
// and the subscribers sending from it); it is changed only under the hub's
// lock.
type outBuf struct {
	b    []byte // full capacity, a power of two
	refs int
}

var outPools [maxPooledShift - minPooledShift + 1]sync.Pool

// outClass is the pool of a buffer for n bytes, or -1 for none.
func outClass(n int) int {
	if n < minPooledOutput || n > 1<<maxPooledShift {
		return -1
	}
	return bits.Len(uint(n-1)) - minPooledShift
}

// getOutBuf returns a buffer of at least n bytes, n in the pooled range
// (outClass(n) >= 0). The bytes are not cleared.
func getOutBuf(n int) *outBuf {
	class := outClass(n)
	if o, ok := outPools[class].Get().(*outBuf); ok {
		return o
	}
	return &outBuf{b: make([]byte, 1<<(class+minPooledShift))}
}

// putOutBuf hands a buffer back; no one may hold it any more.
func putOutBuf(o *outBuf) {
	o.refs = 0
	outPools[outClass(len(o.b))].Put(o)
}

// shimFrameHeader is the size of a shim frame's header: the kind, then a
// big-endian uint32 length (see shim.WriteFrame).
const shimFrameHeader = 5

// readShimFrame reads one frame as shim.ReadFrame does, except that an
// output frame in the pooled range is read into a pooled buffer, returned
// as o (b is o.b[:len]); the caller hands it to the hub with publishPooled
// or drops it.
func readShimFrame(r *bufio.Reader) (kind byte, b []byte, o *outBuf, err error) {
	hdr, err := r.Peek(shimFrameHeader)
	if err == nil && (hdr[0] == shim.FrameStdout || hdr[0] == shim.FrameStderr) {
		n := int(binary.BigEndian.Uint32(hdr[1:]))
		if outClass(n) >= 0 {
			kind = hdr[0]
			_, _ = r.Discard(shimFrameHeader)
			o = getOutBuf(n)
			if _, err := io.ReadFull(r, o.b[:n]); err != nil {
				putOutBuf(o)
				if err == io.EOF {
					err = io.ErrUnexpectedEOF
				}
				return 0, nil, nil, err
			}
			return kind, o.b[:n], o, nil
		}
	}
	// Anything else, including a short or failed header, as before.
	kind, b, err = shim.ReadFrame(r)
	return kind, b, nil, err
}

// publishRead publishes a copy of what one read of a pump brought: in a
// pooled buffer when it is large enough.
func publishRead(h *hub, kind streamKind, data []byte) {
	if outClass(len(data)) < 0 {
		h.publish(kind, append([]byte(nil), data...))
		return
	}
	o := getOutBuf(len(data))
	h.publishPooled(kind, o.b[:copy(o.b, data)], o)
}
