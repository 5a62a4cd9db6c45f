package envd

import (
	"math/bits"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"sandtop/backend/gen/process"
)

// outputCodec is Connect's binary protobuf codec with one shortcut on the
// receiving side. Nearly every message a process stream brings is a data
// event, and decoded the usual way each one's output is a new allocation
// that is garbage a moment later: a client reading 1 GB/s spends more on
// collecting it than on anything else. So a Start or Connect response that
// holds only a data event is decoded here, into a buffer that the consumer
// may hand back (RecycleOutput) once it has written the bytes out. Any
// other message, and any encoding this does not expect, goes to proto.
type outputCodec struct{}

func (outputCodec) Name() string { return "proto" }

func (outputCodec) IsBinary() bool { return true }

func (outputCodec) Marshal(m any) ([]byte, error) { return proto.Marshal(m.(proto.Message)) }

func (outputCodec) MarshalAppend(dst []byte, m any) ([]byte, error) {
	return proto.MarshalOptions{}.MarshalAppend(dst, m.(proto.Message))
}

func (outputCodec) MarshalStable(m any) ([]byte, error) {
	return proto.MarshalOptions{Deterministic: true}.Marshal(m.(proto.Message))
}

func (outputCodec) Unmarshal(b []byte, m any) error {
	switch m := m.(type) {
	case *process.StartResponse:
		if ev := decodeDataEvent(b); ev != nil {
			proto.Reset(m)
			m.Event = ev
			return nil
		}
	case *process.ConnectResponse:
		if ev := decodeDataEvent(b); ev != nil {
			proto.Reset(m)
			m.Event = ev
			return nil
		}
	}
	return proto.Unmarshal(b, m.(proto.Message))
}

// decodeDataEvent decodes a response whose only field is an event (1)
// whose only field is a data event (2) whose only field is one output
// (stdout 1, stderr 2, pty 3), the bytes copied into a recyclable buffer;
// nil for anything else.
func decodeDataEvent(b []byte) *process.ProcessEvent {
	ev, ok := onlyField(b, 1)
	if !ok {
		return nil
	}
	data, ok := onlyField(ev, 2)
	if !ok || len(data) == 0 {
		return nil
	}
	num := protowire.Number(data[0] >> 3)
	out, ok := onlyField(data, num)
	if !ok {
		return nil
	}
	buf := outputBuffer(len(out))
	copy(buf, out)
	de := &process.ProcessEvent_DataEvent{}
	switch num {
	case 1:
		de.Output = &process.ProcessEvent_DataEvent_Stdout{Stdout: buf}
	case 2:
		de.Output = &process.ProcessEvent_DataEvent_Stderr{Stderr: buf}
	case 3:
		de.Output = &process.ProcessEvent_DataEvent_Pty{Pty: buf}
	default:
		RecycleOutput(buf)
		return nil
	}
	return &process.ProcessEvent{Event: &process.ProcessEvent_Data{Data: de}}
}

// onlyField returns the payload of b when b is exactly one length-delimited
// field numbered num (below 16, so its tag is one byte).
func onlyField(b []byte, num protowire.Number) ([]byte, bool) {
	if num < 1 || num > 15 || len(b) < 2 || b[0] != byte(protowire.EncodeTag(num, protowire.BytesType)) {
		return nil, false
	}
	n, k := protowire.ConsumeVarint(b[1:])
	if k < 0 || n != uint64(len(b)-1-k) {
		return nil, false
	}
	return b[1+k:], true
}

// Output buffers come in powers of two from 4 KiB to 4 MiB; smaller and
// larger outputs are allocated as usual and never recycled.
const (
	minOutputShift = 12
	maxOutputShift = 22
)

var outputPools [maxOutputShift - minOutputShift + 1]sync.Pool

// outputClass is the pool for a buffer of capacity c, or -1.
func outputClass(c int) int {
	if c < 1<<minOutputShift || c > 1<<maxOutputShift {
		return -1
	}
	return bits.Len(uint(c-1)) - minOutputShift
}

func outputBuffer(n int) []byte {
	if n == 0 {
		return []byte{}
	}
	class := outputClass(n)
	if class < 0 {
		return make([]byte, n)
	}
	if p, ok := outputPools[class].Get().(*[]byte); ok {
		return (*p)[:n]
	}
	return make([]byte, n, 1<<(class+minOutputShift))
}

// RecycleOutput hands back the bytes of a data event this package decoded
// (from a Start or Connect stream of a client Dial made) for a later event
// to reuse. The caller must hold the only reference to them, and must not
// touch them afterwards. Other slices are ignored unless their capacity is
// exactly one of the pool's sizes, and then recycling them is as safe.
func RecycleOutput(b []byte) {
	c := cap(b)
	class := outputClass(c)
	if class < 0 || c != 1<<(class+minOutputShift) {
		return
	}
	b = b[:0]
	outputPools[class].Put(&b)
}
