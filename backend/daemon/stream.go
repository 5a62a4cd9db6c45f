package daemon

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/shim"
)

const (
	keepaliveHeader  = "Keepalive-Ping-Interval"
	defaultKeepalive = 90 * time.Second
	// sendBatchBytes caps the output taken from the hub per wake-up: a
	// shim's largest frame. Consecutive chunks of one stream in it go out
	// as one data event: a client that fell behind a fast program catches
	// up in fewer, larger messages, and each message costs more than its
	// bytes.
	sendBatchBytes = shim.MaxOutputFrame
	// jsonEventBytes caps a data event's output for a client that speaks
	// Connect's JSON (E2B's SDKs do): a large event costs the client's
	// decoder time, and the daemon a message buffer of a third more than
	// its bytes (eventJSON). 64 KiB (two of envd's reads) streamed the
	// fastest to E2B's JS SDK on a quiet machine: 5% faster than envd's
	// 32 KiB events, where 128 KiB was 4% slower than envd.
	jsonEventBytes = 64 << 10
)

// eventBytes is the largest data event for a request's codec.
func eventBytes(h http.Header) int {
	if strings.Contains(h.Get("Content-Type"), "json") {
		return jsonEventBytes
	}
	return sendBatchBytes
}

// keepaliveInterval reads envd's Keepalive-Ping-Interval header (seconds);
// missing or unparsable means 90 s. A value beyond a day is taken as a day,
// so no number can overflow the duration into a negative one.
func keepaliveInterval(h http.Header) time.Duration {
	n, err := strconv.Atoi(h.Get(keepaliveHeader))
	if err != nil || n <= 0 {
		return defaultKeepalive
	}
	return time.Duration(min(n, maxKeepaliveSeconds)) * time.Second
}

// maxKeepaliveSeconds bounds Keepalive-Ping-Interval (a day).
const maxKeepaliveSeconds = 24 * 60 * 60

// forward sends a subscriber's output and then its end event through send.
// It sends a keepalive when no data went out for the interval. It returns
// when the end was sent, the client left, the daemon shuts down, or the
// subscriber was cut off (that error goes to the client).
//
// maxEvent caps the output of one data event (eventBytes).
func (d *Daemon) forward(ctx context.Context, sub *subscriber, interval time.Duration, maxEvent int, send func(*process.ProcessEvent) error) error {
	parked := false
	defer func() {
		if !parked { // a parked stream has the subscriber now
			sub.unsubscribe()
		}
	}()
	if p, ok := ctx.Value(progressKey{}).(*writeProgress); ok {
		sub.watchWrites(p)
	}
	ka := time.NewTimer(interval)
	defer ka.Stop()
	// A stream quiet for parkIdle is parked (see park); one with output
	// coming stays here, on net/http's buffered path.
	pk := parkableIn(ctx)
	var quiet *time.Timer
	var quietC <-chan time.Time
	if _, deadline := ctx.Deadline(); pk != nil && !deadline {
		quiet = time.NewTimer(parkIdle)
		defer quiet.Stop()
		quietC = quiet.C
	}
	for {
		out, final, err, wait := sub.next(maxEvent)
		if err != nil {
			return err
		}
		if len(out) > 0 {
			if err := sendMerged(out, maxEvent, send); err != nil {
				return err
			}
			ka.Reset(interval)
			if quiet != nil {
				quiet.Reset(parkIdle)
			}
			continue
		}
		if final != nil {
			return send(&process.ProcessEvent{Event: &process.ProcessEvent_End{End: final}})
		}
		if wait == nil { // end already delivered
			return nil
		}
		select {
		case <-wait:
		case <-quietC:
			if ctx.Err() == nil && d.park(pk, sub, interval, maxEvent, wait) {
				parked = true
				return nil
			}
			quiet, quietC = nil, nil // refused: the stream stays here
		case <-ka.C:
			if err := send(&process.ProcessEvent{Event: &process.ProcessEvent_Keepalive{Keepalive: &process.ProcessEvent_KeepAlive{}}}); err != nil {
				return err
			}
			ka.Reset(interval)
		case <-ctx.Done():
			return connect.NewError(connect.CodeCanceled, ctx.Err())
		case <-d.shuttingDown():
			return connect.NewError(connect.CodeUnavailable, errShuttingDown)
		}
	}
}

// parkIdle is how long a stream has nothing to send before it is parked.
const parkIdle = 200 * time.Millisecond

// sendMerged sends out as data events of at most maxEvent bytes,
// consecutive chunks of one stream joined in a pooled buffer, which is
// handed back once they were sent (send has copied them into its message
// by then).
func sendMerged(out []chunk, maxEvent int, send func(*process.ProcessEvent) error) error {
	var scratch []byte
	if len(out) > 1 {
		total := 0
		for _, c := range out {
			total += len(c.data)
		}
		if outClass(total) >= 0 {
			o := getOutBuf(total)
			defer putOutBuf(o)
			scratch = o.b[:0]
		}
	}
	merged, _ := mergeRunsInto(out, scratch)
	for _, c := range merged {
		for len(c.data) > 0 {
			piece := c
			piece.data = c.data[:min(len(c.data), maxEvent)]
			if err := send(dataEvent(piece)); err != nil {
				return err
			}
			c.data = c.data[len(piece.data):]
			c.off += int64(len(piece.data))
		}
	}
	return nil
}

// mergeRuns joins consecutive chunks of the same stream into one (a copy);
// a lone chunk is passed as it is.
func mergeRuns(in []chunk) []chunk {
	out, _ := mergeRunsInto(in, nil)
	return out
}

// mergeRunsInto is mergeRuns with the copies appended to buf, which it
// returns (grown if it had to).
func mergeRunsInto(in []chunk, buf []byte) ([]chunk, []byte) {
	out := in[:0:0]
	buf = buf[:0]
	for i := 0; i < len(in); {
		j := i + 1
		for j < len(in) && in[j].kind == in[i].kind {
			j++
		}
		if j == i+1 {
			out = append(out, in[i])
		} else {
			start := len(buf)
			for _, c := range in[i:j] {
				buf = append(buf, c.data...)
			}
			out = append(out, chunk{kind: in[i].kind, off: in[i].off, data: buf[start:len(buf):len(buf)]})
		}
		i = j
	}
	return out, buf
}

func dataEvent(c chunk) *process.ProcessEvent {
	de := &process.ProcessEvent_DataEvent{}
	switch c.kind {
	case kindStdout:
		de.Output = &process.ProcessEvent_DataEvent_Stdout{Stdout: c.data}
	case kindStderr:
		de.Output = &process.ProcessEvent_DataEvent_Stderr{Stderr: c.data}
	default:
		de.Output = &process.ProcessEvent_DataEvent_Pty{Pty: c.data}
	}
	return &process.ProcessEvent{Event: &process.ProcessEvent_Data{Data: de}}
}

func startEvent(pid uint32) *process.ProcessEvent {
	return &process.ProcessEvent{Event: &process.ProcessEvent_Start{Start: &process.ProcessEvent_StartEvent{Pid: pid}}}
}
