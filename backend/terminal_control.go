package backend

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
)

// controlResult is what a short control command left behind.
type controlResult struct {
	stdout []byte
	stderr []byte
	code   int
}

// maxControlOutput bounds what a control command may print; ps over a
// large sandbox stays far below it.
const maxControlOutput = 4 << 20

// runControl runs one short control command given as argv (no shell)
// through Process.Start and waits for it. stdin, when non-nil, is sent and
// then closed. A command that cannot be started, or ends by a signal, is an
// error; a non-zero exit code is not.
func runControl(ctx context.Context, proc processconnect.ProcessClient, env map[string]string, argv []string, stdin []byte) (controlResult, error) {
	what := strings.Join(argv, " ")
	if len(what) > 60 {
		what = what[:60] + "…"
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	wantStdin := stdin != nil
	stream, err := proc.Start(ctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: argv[0], Args: argv[1:], Envs: env},
		Stdin:   &wantStdin,
	}))
	if err != nil {
		return controlResult{}, fmt.Errorf("control command %q: %w", what, err)
	}
	defer stream.Close()
	var res controlResult
	var pid uint32
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		switch e := ev.GetEvent().(type) {
		case *process.ProcessEvent_Start:
			pid = e.Start.GetPid()
			if wantStdin {
				go feedStdin(ctx, proc, pid, stdin)
			}
		case *process.ProcessEvent_Data:
			if len(res.stdout)+len(res.stderr) > maxControlOutput {
				return res, fmt.Errorf("control command %q printed more than %d bytes", what, maxControlOutput)
			}
			res.stdout = append(res.stdout, e.Data.GetStdout()...)
			res.stderr = append(res.stderr, e.Data.GetStderr()...)
		case *process.ProcessEvent_End:
			if !e.End.GetExited() {
				return res, fmt.Errorf("control command %q ended without exiting (%s)", what, e.End.GetStatus())
			}
			res.code = int(e.End.GetExitCode())
			return res, nil
		}
	}
	err = stream.Err()
	if err == nil {
		err = errors.New("stream ended without an end event")
	}
	if pid != 0 && ctx.Err() == nil {
		killControl(proc, pid)
	}
	return res, fmt.Errorf("control command %q: %w", what, err)
}

// feedStdin delivers a control command's input and closes it. A failure
// shows up as the command's own error (missing input).
func feedStdin(ctx context.Context, proc processconnect.ProcessClient, pid uint32, data []byte) {
	sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}
	if len(data) > 0 {
		if _, err := proc.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
			Process: sel,
			Input:   &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: data}},
		})); err != nil {
			killControl(proc, pid)
			return
		}
	}
	if _, err := proc.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{Process: sel})); err != nil {
		killControl(proc, pid)
	}
}

// killControl stops a control command that lost its caller, so it cannot
// linger; best effort.
func killControl(proc processconnect.ProcessClient, pid uint32) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, _ = proc.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}},
		Signal:  process.Signal_SIGNAL_SIGKILL,
	}))
}

// controlFailure describes a control command's non-zero exit.
func controlFailure(what string, r controlResult) error {
	msg := strings.TrimSpace(string(bytes.ToValidUTF8(r.stderr, []byte("?"))))
	if msg == "" {
		return fmt.Errorf("%s: exit code %d", what, r.code)
	}
	return fmt.Errorf("%s: exit code %d: %s", what, r.code, msg)
}

// deadState is true for zombie and dead process states, which no signal
// can affect and which count as settled.
func deadState(s string) bool {
	return s != "" && (s[0] == 'Z' || s[0] == 'X' || s[0] == 'x')
}
