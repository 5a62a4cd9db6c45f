package seam

import (
	"context"
	"errors"
	"sync"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// stdinChunk bounds one SendInput message.
const stdinChunk = 256 << 10

var errStdinClosed = errors.New("stdin is closed")

// stdinWriter forwards writes to the published process with SendInput, in
// order. It is Handle.Stdin in pipe mode.
type stdinWriter struct {
	h      *Handle
	mu     sync.Mutex
	closed bool
}

func (w *stdinWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errStdinClosed
	}
	if w.h.terminationRequested() {
		return 0, errors.New("stdin: process is being terminated")
	}
	written := 0
	for len(p) > 0 {
		n := min(len(p), stdinChunk)
		if err := w.h.sendStdin(w.h.rt.bg, p[:n]); err != nil {
			return written, err
		}
		written += n
		p = p[n:]
	}
	return written, nil
}

func (w *stdinWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	return w.h.closeStdin(w.h.rt.bg)
}

func (h *Handle) selector() *process.ProcessSelector {
	return &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(h.startPid.Load())}}
}

func (h *Handle) sendStdin(ctx context.Context, data []byte) error {
	_, err := h.rt.proc.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
		Process: h.selector(),
		Input:   &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: data}},
	}))
	return err
}

func (h *Handle) closeStdin(ctx context.Context) error {
	_, err := h.rt.proc.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{Process: h.selector()}))
	return err
}
