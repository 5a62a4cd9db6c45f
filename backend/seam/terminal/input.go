package terminal

import (
	"context"
	"fmt"
	"sync"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// terminalInput delivers a Terminal's writes. On sandtop's daemon it keeps
// one StreamInput open, so a keystroke is one message on a live stream
// rather than a request of its own (this halves echo latency). Stock envd
// gets unary SendInput: its SDKs never use StreamInput, and proxies in
// front of it may buffer a client stream.
type terminalInput struct {
	mu     sync.Mutex // one write at a time keeps bytes in order
	useStr bool
	stream *connect.ClientStreamForClient[process.StreamInputRequest, process.StreamInputResponse]
	cancel context.CancelFunc
}

func (t *Terminal) send(ctx context.Context, data []byte) error {
	in := &t.input
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.useStr {
		if err := in.sendStream(ctx, t, data); err == nil {
			return nil
		}
		// The stream broke (or ctx ended mid-send); the unary call below
		// reports the real reason, or delivers the bytes after all.
	}
	_, err := t.rt.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
		Process: pidSelector(t.pid),
		Input:   &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: data}},
	}))
	return err
}

// sendStream writes data on the input stream, opening it if needed. A
// failed stream is closed; the next write opens a new one.
func (in *terminalInput) sendStream(ctx context.Context, t *Terminal, data []byte) error {
	if in.stream == nil {
		sctx, cancel := context.WithCancel(context.Background())
		s := t.rt.Process.StreamInput(sctx)
		err := s.Send(&process.StreamInputRequest{Event: &process.StreamInputRequest_Start{
			Start: &process.StreamInputRequest_StartEvent{Process: pidSelector(t.pid)},
		}})
		if err != nil {
			cancel()
			return fmt.Errorf("open terminal input stream: %w", err)
		}
		in.stream, in.cancel = s, cancel
	}
	// Send cannot see ctx; a cancelled call (Terminate joining it, or the
	// caller giving up) tears the stream down to unblock it.
	cancelStream := in.cancel
	stop := context.AfterFunc(ctx, cancelStream)
	err := in.stream.Send(&process.StreamInputRequest{Event: &process.StreamInputRequest_Data{
		Data: &process.StreamInputRequest_DataEvent{Input: &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: data}}},
	}})
	if !stop() || err != nil {
		in.closeLocked()
		if err == nil {
			err = context.Cause(ctx)
		}
		return err
	}
	return nil
}

// close ends the input stream, if any.
func (in *terminalInput) close() {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.closeLocked()
}

func (in *terminalInput) closeLocked() {
	if in.stream == nil {
		return
	}
	_, _ = in.stream.CloseAndReceive()
	in.cancel()
	in.stream, in.cancel = nil, nil
}
