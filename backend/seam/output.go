package seam

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/wrapper"
)

// Output streams what a process group wrote, through the daemon's
// process.Process/Connect: first the daemon's replay of recent output
// (sandtop's daemon keeps a bounded ring; stock envd replays nothing), then
// live bytes until the wrapper exits, when the reader returns io.EOF.
// stdout and stderr are merged in arrival order, and the wrapper's
// publication line is dropped when the replay still holds it.
//
// pid is the daemon's pid for the wrapper (Handle.StartPid) or the group's
// pgid (Handle.Pgid, what "sandtop logs" takes); a pgid is resolved to the
// wrapper that started it, which needs the group leader to be alive.
// ctx bounds the whole stream; Close ends it early.
func (r *Runtime) Output(ctx context.Context, pid int) (io.ReadCloser, error) {
	if pid <= 1 {
		return nil, fmt.Errorf("output: %d is not a valid process id", pid)
	}
	ctx, cancel := context.WithCancel(ctx)
	first, stream, err := r.connectOutput(ctx, pid)
	if connect.CodeOf(err) == connect.CodeNotFound {
		// Not a process the daemon started: a pgid, whose leader's parent
		// is the wrapper the daemon did start.
		parent, perr := r.parentOf(ctx, pid)
		if perr != nil {
			cancel()
			return nil, fmt.Errorf("output of %d: %w (and it is no group leader sandtop knows: %w)", pid, err, perr)
		}
		first, stream, err = r.connectOutput(ctx, parent)
	}
	if err != nil {
		cancel()
		return nil, fmt.Errorf("output of %d: %w", pid, err)
	}
	pr, pw := io.Pipe()
	go pumpOutput(first, stream, pw)
	return &outputReader{PipeReader: pr, cancel: cancel}, nil
}

// connectOutput opens Connect and reads its first event, where a bad
// selector shows up.
func (r *Runtime) connectOutput(ctx context.Context, pid int) (*process.ProcessEvent, *connect.ServerStreamForClient[process.ConnectResponse], error) {
	stream, err := r.proc.Connect(ctx, connect.NewRequest(&process.ConnectRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: uint32(pid)}},
	}))
	if err != nil {
		return nil, nil, err
	}
	if !stream.Receive() {
		err := stream.Err()
		_ = stream.Close()
		if err == nil {
			err = errors.New("the stream ended at once")
		}
		return nil, nil, err
	}
	return stream.Msg().GetEvent(), stream, nil
}

// parentOf reads a live process's parent pid from /proc in the sandbox.
func (r *Runtime) parentOf(ctx context.Context, pid int) (int, error) {
	res, err := r.runner.Run(ctx, `read -r line </proc/"$1"/stat && printf '%s' "$line"`, []string{strconv.Itoa(pid)}, nil)
	if err != nil {
		return 0, err
	}
	if res.ExitCode != 0 {
		return 0, fmt.Errorf("process %d is gone", pid)
	}
	// pid (comm) state ppid …; comm may hold spaces and parentheses.
	s := string(res.Stdout)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 2 {
		return 0, fmt.Errorf("unreadable /proc/%d/stat", pid)
	}
	ppid, err := strconv.Atoi(fields[1])
	if err != nil || ppid <= 1 {
		return 0, fmt.Errorf("process %d has no usable parent (%q)", pid, fields[1])
	}
	return ppid, nil
}

// outputReader ends the stream when the caller closes it.
type outputReader struct {
	*io.PipeReader
	cancel context.CancelFunc
}

func (o *outputReader) Close() error {
	o.cancel()
	return o.PipeReader.Close()
}

// pumpOutput copies data events to w until the end event (EOF) or a
// stream error.
func pumpOutput(first *process.ProcessEvent, stream *connect.ServerStreamForClient[process.ConnectResponse], w *io.PipeWriter) {
	defer stream.Close()
	var stripOut, stripErr wrapper.Stripper
	ev := first
	for {
		switch e := ev.GetEvent().(type) {
		case *process.ProcessEvent_Data:
			out, errb := stripOut.Strip(e.Data.GetStdout()), stripErr.Strip(e.Data.GetStderr())
			for _, b := range [][]byte{out, errb} {
				if len(b) > 0 {
					if _, err := w.Write(b); err != nil {
						return // the reader closed
					}
				}
			}
		case *process.ProcessEvent_End:
			_ = w.Close()
			return
		}
		if !stream.Receive() {
			err := stream.Err()
			if err == nil {
				err = errors.New("output stream ended without an end event")
			}
			_ = w.CloseWithError(err)
			return
		}
		ev = stream.Msg().GetEvent()
	}
}
