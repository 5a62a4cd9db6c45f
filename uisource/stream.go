package uisource

import (
	"time"

	"context"
	"io"

	"connectrpc.com/connect"

	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/ui"
	"sandtop/wrapper"
)

// Stock envd keeps no output for late subscribers: attaching there shows
// only what the program writes from now on. The pane says so first, in
// the stream itself, so the operator does not take a blank pane for a hang.
const (
	noReplayTerminal = "\x1b[90m[compat: stock envd keeps no replay; only new output appears below]\x1b[0m\r\n"
	noReplayOutput   = "[compat: stock envd keeps no replay; only new output appears below]\n"
)

// Output streams a process's output through Process.Connect: the daemon's
// replay of recent output, then live bytes. Closing it only unsubscribes.
func (s *backendSource) Output(ctx context.Context, pid int) (io.ReadCloser, error) {
	r, err := s.connect(ctx, pid)
	if err != nil {
		return nil, err
	}
	if s.compat {
		r.notice = []byte(noReplayOutput)
	}
	return r, nil
}

// Attach is Output plus input and resize, all over the Process service
// (the same on stock envd), so detaching is just closing the subscription.
func (s *backendSource) Attach(ctx context.Context, pid int) (ui.TerminalConn, error) {
	r, err := s.connect(ctx, pid)
	if err != nil {
		return nil, err
	}
	if s.compat {
		r.notice = []byte(noReplayTerminal)
	}
	return &processConn{streamReader: r, proc: s.c, pid: pid}, nil
}

// connect subscribes to pid's output. A wrapped group's streams each start
// with the wrapper's published line, which is the daemon's, not the
// program's: it is dropped from each (a terminal has no such line).
func (s *backendSource) connect(ctx context.Context, pid int) (*streamReader, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := s.c.Process.Connect(ctx, connect.NewRequest(&process.ConnectRequest{Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(pid)}}}))
	if err != nil {
		cancel()
		return nil, err
	}
	pr, pw := io.Pipe()
	go func() {
		defer stream.Close()
		var stripOut, stripErr wrapper.Stripper
		for stream.Receive() {
			ev := stream.Msg().GetEvent()
			if d := ev.GetData(); d != nil {
				chunk := d.GetPty()
				if chunk == nil {
					chunk = append(stripOut.Strip(d.GetStdout()), stripErr.Strip(d.GetStderr())...)
				}
				if _, err := pw.Write(chunk); err != nil {
					return
				}
			}
			if ev.GetEnd() != nil {
				break
			}
		}
		err := stream.Err()
		if ctx.Err() != nil || err == nil {
			pw.Close()
			return
		}
		pw.CloseWithError(err)
	}()
	return &streamReader{r: pr, cancel: cancel}, nil
}

// streamReader is one Connect subscription as a reader.
type streamReader struct {
	r      *io.PipeReader
	cancel context.CancelFunc
	// notice is local text read before the stream (see noReplayTerminal).
	notice []byte
}

func (r *streamReader) Read(p []byte) (int, error) {
	if len(r.notice) > 0 {
		n := copy(p, r.notice)
		r.notice = r.notice[n:]
		return n, nil
	}
	return r.r.Read(p)
}

func (r *streamReader) Close() error {
	r.cancel()
	return r.r.Close()
}

// processConn adds terminal input and resize to a subscription.
// inputTimeout bounds one write of input or one resize of an attached
// terminal, so a dead connection turns into an error, not a hang.
const inputTimeout = 10 * time.Second

type processConn struct {
	*streamReader
	proc *envd.Client
	pid  int
}

func (c *processConn) Write(p []byte) (int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
	defer cancel()
	_, err := c.proc.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(c.pid)}},
		Input:   &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: append([]byte(nil), p...)}},
	}))
	if err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *processConn) Resize(rows, cols int) error {
	ctx, cancel := context.WithTimeout(context.Background(), inputTimeout)
	defer cancel()
	_, err := c.proc.Process.Update(ctx, connect.NewRequest(&process.UpdateRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(c.pid)}},
		Pty:     &process.PTY{Size: &process.PTY_Size{Rows: uint32(rows), Cols: uint32(cols)}},
	}))
	return err
}
