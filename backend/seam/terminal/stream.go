package terminal

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

// eventStream is the part of a Start or Connect stream the pump reads.
type eventStream interface {
	next() (*process.ProcessEvent, error) // io.EOF-free: a clean end is (nil, nil)
	close()
}

type startStream struct {
	s *connect.ServerStreamForClient[process.StartResponse]
}

func (s startStream) next() (*process.ProcessEvent, error) {
	if s.s.Receive() {
		return s.s.Msg().GetEvent(), nil
	}
	return nil, s.s.Err()
}
func (s startStream) close() { _ = s.s.Close() }

type connectStream struct {
	s *connect.ServerStreamForClient[process.ConnectResponse]
}

func (s connectStream) next() (*process.ProcessEvent, error) {
	if s.s.Receive() {
		return s.s.Msg().GetEvent(), nil
	}
	return nil, s.s.Err()
}
func (s connectStream) close() { _ = s.s.Close() }

// outputFilter decides which PTY bytes belong to the program.
type outputFilter interface {
	feed(p []byte) []byte
	// flush returns what is still held back when the stream ends.
	flush() []byte
}

// pump moves the PTY stream into Output until the end event, then records
// the outcome and closes Output and Done. boundary is closed once the first
// byte after the output boundary may flow (at once for attach).
func (t *Terminal) pump(stream eventStream, filter outputFilter, passed func() bool, boundary chan struct{}) {
	defer stream.close()
	signalled := false
	mark := func() {
		if !signalled && passed() {
			signalled = true
			close(boundary)
		}
	}
	mark()
	for {
		ev, err := stream.next()
		if err != nil || ev == nil {
			if err == nil {
				err = errors.New("terminal output stream ended without an exit event")
			}
			t.finish(control.Outcome{}, fmt.Errorf("terminal transport: %w", err))
			return
		}
		switch e := ev.GetEvent().(type) {
		case *process.ProcessEvent_Data:
			t.output.push(filter.feed(e.Data.GetPty()))
			mark()
		case *process.ProcessEvent_End:
			t.output.push(filter.flush())
			t.finish(t.outcomeOf(e.End), nil)
			return
		}
	}
}

// finish publishes the end of the top-level process.
func (t *Terminal) finish(o control.Outcome, err error) {
	if t.detached.Load() {
		o, err = control.Outcome{}, ErrDetached
	}
	// A write blocked on the input stream holds its lock; don't wait on it.
	go t.input.close()
	t.outcome, t.err = o, err
	t.output.close(err)
	close(t.done)
}

// outcomeOf maps an envd end event. A signal death carries no exit code
// there (-1), only the status text; the extension's ExitStatus has the exact
// signal, so it is asked first when present.
func (t *Terminal) outcomeOf(end *process.ProcessEvent_EndEvent) control.Outcome {
	if end.GetExited() {
		return control.ExitOutcome(int(end.GetExitCode()))
	}
	if t.rt.Supervisor != nil {
		ctx, cancel := context.WithTimeout(context.Background(), exitStatusTimeout)
		res, err := t.rt.Supervisor.ExitStatus(ctx, connect.NewRequest(&sandtopv1.ExitStatusRequest{Pid: uint32(t.pid)}))
		cancel()
		if err == nil && res.Msg.Exited {
			if res.Msg.Signal != 0 {
				return control.SignalOutcome(syscall.Signal(res.Msg.Signal))
			}
			return control.ExitOutcome(int(res.Msg.ExitCode))
		}
	}
	if sig := control.SignalInStatus(end.GetStatus()); sig != 0 {
		return control.SignalOutcome(sig)
	}
	if sig := t.requestedSignal(); sig != 0 {
		return control.SignalOutcome(sig)
	}
	return control.ExitOutcome(int(end.GetExitCode()))
}

// attachFilter drops a boundary marker at the very start of a replayed
// stream (the only bootstrap bytes our runner emits) and passes the rest.
type attachFilter struct {
	head    []byte
	decided bool
}

func (f *attachFilter) feed(p []byte) []byte {
	if f.decided {
		return p
	}
	f.head = append(f.head, p...)
	n := min(len(f.head), wrapper.BoundaryLen)
	if !boundaryShaped(f.head[:n]) {
		return f.release(f.head)
	}
	if n < wrapper.BoundaryLen {
		return nil // could still be a marker: wait for more
	}
	return f.release(f.head[wrapper.BoundaryLen:])
}

// flush hands over bytes held back when the stream ends.
func (f *attachFilter) flush() []byte { return f.release(f.head) }

func (f *attachFilter) release(p []byte) []byte {
	f.decided, f.head = true, nil
	return p
}

// boundaryShaped reports whether b is a prefix of some boundary marker.
func boundaryShaped(b []byte) bool {
	for i, c := range b {
		if i < len(wrapper.BoundaryPrefix) {
			if c != wrapper.BoundaryPrefix[i] {
				return false
			}
		} else if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
