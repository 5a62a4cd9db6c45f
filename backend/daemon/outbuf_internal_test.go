package daemon

import (
	"bufio"
	"bytes"
	"testing"
	"time"

	"sandtop/backend/gen/process"
	"sandtop/backend/shim"
)

// A pooled buffer goes back to its pool only once the log has dropped it
// and every subscriber that was handed it asked for more (or left): until
// then its bytes are what was published, however far the log moved on.
func TestHubHandsPooledBuffersBackOnlyWhenNobodyHoldsThem(t *testing.T) {
	const replay = 16 << 10
	h := newHub(replay, time.Minute)
	fast, slow := h.subscribe(false), h.subscribe(false)
	var bufs []*outBuf
	publish := func(fill byte) {
		o := getOutBuf(64 << 10)
		for _, held := range bufs {
			if o == held && o.refs != 0 {
				t.Fatalf("the pool handed out buffer %c while it is held", o.b[0])
			}
		}
		data := o.b[:64<<10]
		for i := range data {
			data[i] = fill
		}
		o.refs = 99 // publishPooled takes it over whatever it held
		h.publishPooled(kindStdout, data, o)
		bufs = append(bufs, o)
	}
	publish('a')
	outSlow, _, _, _ := slow.next(1 << 20) // holds a
	publish('b')
	for range 2 { // fast reads a and b, then asks again: holds nothing
		if _, _, err, _ := fast.next(1 << 20); err != nil {
			t.Fatal(err)
		}
	}
	// Both readers are past a and the replay is 16 KiB: the log let go.
	if bufs[0].refs != 1 {
		t.Fatalf("buffer a has %d holders, want 1 (slow)", bufs[0].refs)
	}
	if bufs[1].refs != 1 { // the log's, for slow
		t.Fatalf("buffer b has %d holders, want 1 (the log)", bufs[1].refs)
	}
	publish('c')
	publish('d')
	if len(outSlow) != 1 || bytes.Count(outSlow[0].data, []byte{'a'}) != 64<<10 {
		t.Fatal("slow's output changed while it held it")
	}
	slow.unsubscribe() // done with a; b was for slow only
	if bufs[0].refs != 0 || bufs[1].refs != 0 {
		t.Fatalf("holders of a, b once slow left: %d, %d; want 0, 0 (back in the pool)", bufs[0].refs, bufs[1].refs)
	}
	// A replaying subscriber holds the tail of the last buffer while it
	// sends it, and fast, which has not read c and d, holds them in the log.
	r := h.subscribe(true)
	out, _, _, _ := r.next(1 << 20)
	last := bufs[len(bufs)-1]
	if len(out) != 1 || len(out[0].data) != replay || last.refs != 2 {
		t.Fatalf("replay: %d chunks, the last buffer held %d times", len(out), last.refs)
	}
	fast.unsubscribe()
	r.unsubscribe()
	if bufs[2].refs != 0 || last.refs != 1 {
		t.Fatalf("holders of c, d after their readers left: %d, %d; want 0, 1 (the replay)", bufs[2].refs, last.refs)
	}
}

// A subscriber cut off for stalling lets go of what it held once its
// stream ends.
func TestHubCutSubscriberReleasesItsBuffers(t *testing.T) {
	h := newHub(16<<10, 10*time.Millisecond)
	s := h.subscribe(false)
	o := getOutBuf(64 << 10)
	h.publishPooled(kindStdout, o.b[:64<<10], o)
	s.next(1 << 20) // holds o, then stalls
	for range (h.window >> 16) + 2 {
		p := getOutBuf(64 << 10)
		h.publishPooled(kindStdout, p.b[:64<<10], p)
	}
	if _, _, err, _ := s.next(1 << 20); err == nil {
		t.Fatal("the stalled subscriber was not cut off")
	}
	if o.refs != 0 {
		t.Fatalf("the cut subscriber's buffer has %d holders, want 0", o.refs)
	}
	s.unsubscribe()
}

func TestReadShimFramePoolsOutputFrames(t *testing.T) {
	var wire bytes.Buffer
	big := bytes.Repeat([]byte{'x'}, 100<<10)
	small := []byte("hello")
	for _, f := range []struct {
		kind byte
		b    []byte
	}{{shim.FrameStdout, big}, {shim.FrameStderr, small}, {shim.FrameExit, []byte("0")}, {shim.FrameStderr, big[:minPooledOutput]}} {
		if err := shim.WriteFrame(&wire, f.kind, f.b); err != nil {
			t.Fatal(err)
		}
	}
	r := bufio.NewReaderSize(&wire, 4<<10)
	want := []struct {
		kind   byte
		n      int
		pooled bool
	}{{shim.FrameStdout, len(big), true}, {shim.FrameStderr, len(small), false}, {shim.FrameExit, 1, false}, {shim.FrameStderr, minPooledOutput, true}}
	for i, w := range want {
		kind, b, o, err := readShimFrame(r)
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if kind != w.kind || len(b) != w.n || (o != nil) != w.pooled {
			t.Fatalf("frame %d: kind %d, %d bytes, pooled %v; want %d, %d, %v", i, kind, len(b), o != nil, w.kind, w.n, w.pooled)
		}
		if o != nil && &o.b[0] != &b[0] {
			t.Fatalf("frame %d: the bytes are not in the pooled buffer", i)
		}
	}
	if _, _, _, err := readShimFrame(r); err == nil {
		t.Fatal("no error at the end of the frames")
	}
	// A frame cut short is an error, as in shim.ReadFrame.
	wire.Reset()
	_ = shim.WriteFrame(&wire, shim.FrameStdout, big)
	cut := bufio.NewReader(bytes.NewReader(wire.Bytes()[:len(wire.Bytes())-1]))
	if _, _, _, err := readShimFrame(cut); err == nil {
		t.Fatal("a cut frame read without error")
	}
}

// Merged runs are built in a pooled buffer; each event's bytes are right
// when send sees them, also when a run is large.
func TestSendMergedSendsEachRunWhole(t *testing.T) {
	big := bytes.Repeat([]byte{'b'}, 40<<10)
	in := []chunk{
		{kind: kindStdout, off: 0, data: big},
		{kind: kindStdout, off: int64(len(big)), data: []byte("c")},
		{kind: kindStderr, off: int64(len(big)) + 1, data: []byte("E")},
		{kind: kindStdout, off: int64(len(big)) + 2, data: []byte("d")},
		{kind: kindStdout, off: int64(len(big)) + 3, data: big},
	}
	var got []string
	err := sendMerged(in, sendBatchBytes, func(ev *process.ProcessEvent) error {
		d := ev.GetData()
		switch {
		case d.GetStdout() != nil:
			got = append(got, "out:"+string(d.GetStdout()))
		default:
			got = append(got, "err:"+string(d.GetStderr()))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"out:" + string(big) + "c", "err:E", "out:d" + string(big)}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d: %d bytes starting %.8q, want %d starting %.8q", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
	if string(in[1].data) != "c" || !bytes.Equal(in[0].data, big) {
		t.Error("the hub's chunks were written into")
	}
}
