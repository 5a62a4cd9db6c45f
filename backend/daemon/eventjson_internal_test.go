package daemon

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"sandtop/backend/gen/process"
)

// compact is protojson's rendering of m without its whitespace (which
// protojson varies on purpose).
func compact(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := protojson.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// Every response the daemon streams reads in its JSON exactly as
// protojson writes it, whether it took the data event shortcut or not,
// and into a buffer that already holds something.
func TestEventJSONWritesWhatProtojsonWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	data := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.UintN(256))
		}
		return b
	}
	ev := func(e *process.ProcessEvent) []proto.Message {
		return []proto.Message{&process.StartResponse{Event: e}, &process.ConnectResponse{Event: e}}
	}
	var msgs []proto.Message
	for _, n := range []int{1, 2, 3, 64, 1000, 64 << 10} {
		msgs = append(msgs, ev(dataEvent(chunk{kind: kindStdout, data: data(n)}))...)
		msgs = append(msgs, ev(dataEvent(chunk{kind: kindStderr, data: data(n)}))...)
		msgs = append(msgs, ev(dataEvent(chunk{kind: kindPTY, data: data(n)}))...)
	}
	// What goes protojson's way: other events, an empty output, no event.
	msgs = append(msgs, ev(startEvent(42))...)
	msgs = append(msgs, ev(dataEvent(chunk{kind: kindStdout}))...)
	msgs = append(msgs, ev(&process.ProcessEvent{Event: &process.ProcessEvent_Keepalive{Keepalive: &process.ProcessEvent_KeepAlive{}}})...)
	msg := "exit status 3"
	msgs = append(msgs, ev(&process.ProcessEvent{Event: &process.ProcessEvent_End{End: &process.ProcessEvent_EndEvent{ExitCode: 3, Exited: true, Status: msg, Error: &msg}}})...)
	msgs = append(msgs, &process.StartResponse{}, &process.ListResponse{Processes: []*process.ProcessInfo{{Pid: 7}}})
	for _, c := range eventJSONCodecs {
		for _, m := range msgs {
			got, err := c.MarshalAppend([]byte("prefix"), m)
			if err != nil {
				t.Fatal(err)
			}
			got, ok := bytes.CutPrefix(got, []byte("prefix"))
			if !ok {
				t.Fatalf("%s: MarshalAppend lost what dst held", c.name)
			}
			var compacted bytes.Buffer
			if err := json.Compact(&compacted, got); err != nil {
				t.Fatalf("%s: %T: not JSON: %v", c.name, m, err)
			}
			if want := compact(t, m); !bytes.Equal(compacted.Bytes(), want) {
				t.Fatalf("%s: %T written as\n%.200s\nwant\n%.200s", c.name, m, got, want)
			}
			back := m.ProtoReflect().New().Interface()
			if err := c.Unmarshal(got, back); err != nil || !proto.Equal(back, m) {
				t.Fatalf("%s: %T does not read back (%v)", c.name, m, err)
			}
		}
	}
}

// A data event is written into the buffer it is given and allocates
// nothing (protojson made a base64 copy of each event's output).
func TestEventJSONWritesOutputWithoutACopy(t *testing.T) {
	m := &process.StartResponse{Event: dataEvent(chunk{kind: kindStdout, data: make([]byte, jsonEventBytes)})}
	buf := make([]byte, 0, 2*jsonEventBytes)
	c := eventJSONCodecs[0]
	if n := testing.AllocsPerRun(20, func() {
		var err error
		if buf, err = c.MarshalAppend(buf[:0], m); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Fatalf("writing a %d-byte data event allocated %v times, want 0", jsonEventBytes, n)
	}
}
