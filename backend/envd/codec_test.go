package envd

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"sandtop/backend/gen/process"
)

// The hand decoder must read every message exactly as proto does: data
// events of each kind and size, the other events, and encodings it does
// not take a shortcut for (which it hands to proto).
func TestOutputCodecDecodesAsProto(t *testing.T) {
	data := func(de *process.ProcessEvent_DataEvent) *process.ProcessEvent {
		return &process.ProcessEvent{Event: &process.ProcessEvent_Data{Data: de}}
	}
	var events []*process.ProcessEvent
	for _, n := range []int{0, 1, 127, 128, 5000, 300 << 10, 5 << 20} {
		b := bytes.Repeat([]byte{'x'}, n)
		events = append(events,
			data(&process.ProcessEvent_DataEvent{Output: &process.ProcessEvent_DataEvent_Stdout{Stdout: b}}),
			data(&process.ProcessEvent_DataEvent{Output: &process.ProcessEvent_DataEvent_Stderr{Stderr: b}}),
			data(&process.ProcessEvent_DataEvent{Output: &process.ProcessEvent_DataEvent_Pty{Pty: b}}))
	}
	events = append(events,
		data(&process.ProcessEvent_DataEvent{}),
		&process.ProcessEvent{Event: &process.ProcessEvent_Start{Start: &process.ProcessEvent_StartEvent{Pid: 42}}},
		&process.ProcessEvent{Event: &process.ProcessEvent_End{End: &process.ProcessEvent_EndEvent{ExitCode: 3, Exited: true, Status: "exit status 3"}}},
		&process.ProcessEvent{Event: &process.ProcessEvent_Keepalive{Keepalive: &process.ProcessEvent_KeepAlive{}}},
		nil)
	var c outputCodec
	check := func(t *testing.T, wire []byte) {
		t.Helper()
		for _, msg := range []proto.Message{&process.StartResponse{}, &process.ConnectResponse{}} {
			want := msg.ProtoReflect().New().Interface()
			if err := proto.Unmarshal(wire, want); err != nil {
				t.Fatal(err)
			}
			got := msg.ProtoReflect().New().Interface()
			if err := c.Unmarshal(wire, got); err != nil {
				t.Fatal(err)
			}
			if !proto.Equal(got, want) {
				t.Fatalf("decoded %v, proto decodes %v", clip(got), clip(want))
			}
		}
	}
	for _, ev := range events {
		wire, err := c.Marshal(&process.StartResponse{Event: ev})
		if err != nil {
			t.Fatal(err)
		}
		check(t, wire)
		// The same with a field proto keeps as unknown: no shortcut then.
		check(t, protowire.AppendBytes(protowire.AppendTag(append([]byte(nil), wire...), 9, protowire.BytesType), []byte("?")))
	}
	// A data event whose output field comes twice: proto keeps the last.
	inner := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte("first"))
	inner = protowire.AppendBytes(protowire.AppendTag(inner, 1, protowire.BytesType), []byte("last"))
	ev := protowire.AppendBytes(protowire.AppendTag(nil, 2, protowire.BytesType), inner)
	check(t, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), ev))
}

func clip(m proto.Message) string {
	s := m.(interface{ String() string }).String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// A recycled buffer is handed out again, and what is decoded into it is
// the new event's output, not the old one's.
func TestRecycledOutputIsReused(t *testing.T) {
	var c outputCodec
	decode := func(b []byte) []byte {
		wire, err := c.Marshal(&process.StartResponse{Event: &process.ProcessEvent{Event: &process.ProcessEvent_Data{Data: &process.ProcessEvent_DataEvent{Output: &process.ProcessEvent_DataEvent_Stdout{Stdout: b}}}}})
		if err != nil {
			t.Fatal(err)
		}
		var m process.StartResponse
		if err := c.Unmarshal(wire, &m); err != nil {
			t.Fatal(err)
		}
		return m.GetEvent().GetData().GetStdout()
	}
	first := decode(bytes.Repeat([]byte{'a'}, 100<<10))
	if cap(first) != 128<<10 {
		t.Fatalf("a 100 KiB output got a buffer of %d bytes, want the 128 KiB class", cap(first))
	}
	// Every buffer stays referenced here, so the collector cannot free one
	// and hand its memory out again: an address seen twice went through
	// the pool. A pool may drop what it is given (under -race it drops a
	// quarter on purpose), so there are many tries.
	kept := [][]byte{first}
	seen := map[*byte]bool{&first[0]: true}
	RecycleOutput(first)
	reused := false
	for i := range 100 {
		want := bytes.Repeat([]byte{byte('b' + i%20)}, 90<<10)
		b := decode(want)
		if !bytes.Equal(b, want) {
			t.Fatal("a buffer does not hold the output decoded into it")
		}
		if seen[&b[0]] {
			reused = true
			break
		}
		seen[&b[0]] = true
		kept = append(kept, b)
		RecycleOutput(b)
	}
	if !reused {
		t.Errorf("none of %d recycled buffers was handed out again", len(kept))
	}
}
