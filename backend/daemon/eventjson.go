package daemon

import (
	"encoding/base64"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"sandtop/backend/gen/process"
)

// eventJSON is Connect's JSON codec (E2B's SDKs speak it) with one
// shortcut. protojson writes a data event's output by first making a
// base64 string of it, a copy a third larger than the output that is
// garbage as soon as it is copied into the message: streaming a program's
// output to a JSON client, that was most of what the daemon allocated,
// and what its heap grew with. The shortcut encodes the output straight
// into the message buffer. Everything else, and all decoding, is
// protojson's, with Connect's options.
type eventJSON struct{ name string }

// eventJSONCodecs replace Connect's two JSON codecs.
var eventJSONCodecs = []eventJSON{{"json"}, {"json; charset=utf-8"}}

func (c eventJSON) Name() string { return c.name }

func (c eventJSON) Marshal(msg any) ([]byte, error) { return c.MarshalAppend(nil, msg) }

// MarshalAppend is what Connect calls, with a pooled buffer as dst.
func (c eventJSON) MarshalAppend(dst []byte, msg any) ([]byte, error) {
	if key, data := outputOf(msg); key != "" {
		return appendDataEvent(dst, key, data), nil
	}
	m, ok := msg.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("%T is not a protobuf message", msg)
	}
	return protojson.MarshalOptions{}.MarshalAppend(dst, m)
}

func (c eventJSON) Unmarshal(b []byte, msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return fmt.Errorf("%T is not a protobuf message", msg)
	}
	if len(b) == 0 {
		return errors.New("zero-length payload is not a valid JSON object")
	}
	// As Connect does: unknown fields are dropped, so that clients and
	// servers need not have the very same schema.
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, m); err != nil {
		return fmt.Errorf("unmarshal into %T: %w", msg, err)
	}
	return nil
}

// outputOf is the JSON name and bytes of the output msg carries when it
// is a Start or Connect response with a data event and nothing else
// (unknown fields included); key is empty otherwise, and for no bytes.
func outputOf(msg any) (key string, data []byte) {
	var ev *process.ProcessEvent
	switch m := msg.(type) {
	case *process.StartResponse:
		if len(m.ProtoReflect().GetUnknown()) > 0 {
			return "", nil
		}
		ev = m.GetEvent()
	case *process.ConnectResponse:
		if len(m.ProtoReflect().GetUnknown()) > 0 {
			return "", nil
		}
		ev = m.GetEvent()
	default:
		return "", nil
	}
	d := ev.GetData()
	if d == nil || len(ev.ProtoReflect().GetUnknown()) > 0 || len(d.ProtoReflect().GetUnknown()) > 0 {
		return "", nil
	}
	switch o := d.GetOutput().(type) {
	case *process.ProcessEvent_DataEvent_Stdout:
		key, data = "stdout", o.Stdout
	case *process.ProcessEvent_DataEvent_Stderr:
		key, data = "stderr", o.Stderr
	case *process.ProcessEvent_DataEvent_Pty:
		key, data = "pty", o.Pty
	}
	if len(data) == 0 {
		return "", nil
	}
	return key, data
}

// appendDataEvent writes what protojson writes for such a response:
// {"event":{"data":{"stdout":"<standard base64>"}}}.
func appendDataEvent(dst []byte, key string, data []byte) []byte {
	dst = append(dst, `{"event":{"data":{"`...)
	dst = append(dst, key...)
	dst = append(dst, `":"`...)
	dst = base64.StdEncoding.AppendEncode(dst, data)
	return append(dst, `"}}}`...)
}
