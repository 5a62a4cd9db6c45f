package seam

import (
	"bytes"
	"context"
	"fmt"
	"syscall"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/wrapper"
)

// sandboxCommandLimit bounds what one control command may print.
const sandboxCommandLimit = 8 << 20

// sandboxCommand is the result of one short control command.
type sandboxCommand struct {
	stdout, stderr []byte
	exitCode       int
	signal         syscall.Signal
}

// commandRunner runs short bash scripts in the sandbox through
// process.Process/Start and waits for them. Scripts take their arguments as
// quoted words (wrapper.Quote), so any bytes survive the UTF-8-only proto
// string fields.
type commandRunner struct {
	proc processconnect.ProcessClient
	bash string
	env  map[string]string
}

// run executes script with args bound to $1…; stdin, when non-nil, is sent
// and closed. A non-zero exit is not an error; failing to run is.
func (c commandRunner) run(ctx context.Context, script string, args []string, stdin []byte) (sandboxCommand, error) {
	return c.exec(ctx, "", script, args, stdin)
}

// runIn is run with a working directory.
func (c commandRunner) runIn(ctx context.Context, cwd, script string, args []string) (sandboxCommand, error) {
	return c.exec(ctx, cwd, script, args, nil)
}

func (c commandRunner) exec(ctx context.Context, cwd, script string, args []string, stdin []byte) (sandboxCommand, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := "set -- " + wrapper.QuoteAll(args) + "\n" + script
	withStdin := stdin != nil
	cfg := &process.ProcessConfig{Cmd: c.bash, Args: []string{"--noprofile", "--norc", "-c", full}, Envs: c.env}
	if cwd != "" {
		cfg.Cwd = &cwd
	}
	stream, err := c.proc.Start(ctx, connect.NewRequest(&process.StartRequest{Process: cfg, Stdin: &withStdin}))
	if err != nil {
		return sandboxCommand{}, err
	}
	defer stream.Close()
	var out, errb bytes.Buffer
	for stream.Receive() {
		switch e := stream.Msg().GetEvent().GetEvent().(type) {
		case *process.ProcessEvent_Start:
			if withStdin {
				sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: e.Start.GetPid()}}
				if len(stdin) > 0 {
					if _, err := c.proc.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{Process: sel, Input: &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: stdin}}})); err != nil {
						return sandboxCommand{}, err
					}
				}
				if _, err := c.proc.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{Process: sel})); err != nil {
					return sandboxCommand{}, err
				}
			}
		case *process.ProcessEvent_Data:
			out.Write(e.Data.GetStdout())
			errb.Write(e.Data.GetStderr())
			if out.Len()+errb.Len() > sandboxCommandLimit {
				return sandboxCommand{}, fmt.Errorf("control command printed more than %d bytes", sandboxCommandLimit)
			}
		case *process.ProcessEvent_End:
			res := sandboxCommand{stdout: out.Bytes(), stderr: errb.Bytes(), exitCode: int(e.End.GetExitCode())}
			if sig := signalInStatus(e.End.GetStatus()); sig != 0 {
				res.signal = sig
				return res, fmt.Errorf("control command killed by %s", signalText(sig))
			}
			return res, nil
		}
	}
	if err := stream.Err(); err != nil {
		return sandboxCommand{}, err
	}
	return sandboxCommand{}, fmt.Errorf("control command stream ended without an end event")
}
