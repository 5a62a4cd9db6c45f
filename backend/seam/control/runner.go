package control

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

// CommandResult is the result of one short control command.
type CommandResult struct {
	Stdout, Stderr []byte
	ExitCode       int
	Signal         syscall.Signal
}

// Runner runs short bash scripts in the sandbox through
// process.Process/Start and waits for them. Scripts take their arguments as
// quoted words (wrapper.Quote), so any bytes survive the UTF-8-only proto
// string fields.
type Runner struct {
	Process processconnect.ProcessClient
	Bash    string            // bash's absolute path in the sandbox
	Env     map[string]string // the scripts' environment
	// Scanner is where this build of sandtop's supervisor would be in the
	// sandbox (stock envd): the process table and the state directories
	// are read by it, in one process, where it is installed, and by ps
	// and find where it is not. "" reads with ps and find only.
	Scanner string
}

// Run executes script with args bound to $1…; stdin, when non-nil, is sent
// and closed. A non-zero exit is not an error; failing to run is.
func (c Runner) Run(ctx context.Context, script string, args []string, stdin []byte) (CommandResult, error) {
	return c.exec(ctx, "", script, args, stdin, nil)
}

// RunIn is Run with a working directory.
func (c Runner) RunIn(ctx context.Context, cwd, script string, args []string) (CommandResult, error) {
	return c.exec(ctx, cwd, script, args, nil, nil)
}

// Stream is Run with stdout handed to onStdout as it arrives, unbounded
// and never kept (the result's Stdout is empty): for output that grows
// with the sandbox, such as its process table. An error from onStdout
// stops the command and is returned.
func (c Runner) Stream(ctx context.Context, script string, args []string, onStdout func([]byte) error) (CommandResult, error) {
	return c.exec(ctx, "", script, args, nil, onStdout)
}

func (c Runner) exec(ctx context.Context, cwd, script string, args []string, stdin []byte, onStdout func([]byte) error) (CommandResult, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	full := "set -- " + wrapper.QuoteAll(args) + "\n" + script
	withStdin := stdin != nil
	cfg := &process.ProcessConfig{Cmd: c.Bash, Args: []string{"--noprofile", "--norc", "-c", full}, Envs: c.Env}
	if cwd != "" {
		cfg.Cwd = &cwd
	}
	stream, err := c.Process.Start(ctx, connect.NewRequest(&process.StartRequest{Process: cfg, Stdin: &withStdin}))
	if err != nil {
		return CommandResult{}, err
	}
	defer stream.Close()
	var out, errb bytes.Buffer
	for stream.Receive() {
		switch e := stream.Msg().GetEvent().GetEvent().(type) {
		case *process.ProcessEvent_Start:
			if withStdin {
				sel := &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: e.Start.GetPid()}}
				if len(stdin) > 0 {
					if _, err := c.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{Process: sel, Input: &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: stdin}}})); err != nil {
						return CommandResult{}, err
					}
				}
				if _, err := c.Process.CloseStdin(ctx, connect.NewRequest(&process.CloseStdinRequest{Process: sel})); err != nil {
					return CommandResult{}, err
				}
			}
		case *process.ProcessEvent_Data:
			if onStdout != nil {
				if b := e.Data.GetStdout(); len(b) > 0 {
					if err := onStdout(b); err != nil {
						return CommandResult{}, err
					}
				}
			} else {
				out.Write(e.Data.GetStdout())
			}
			errb.Write(e.Data.GetStderr())
			if out.Len()+errb.Len() > sandboxCommandLimit {
				return CommandResult{}, fmt.Errorf("control command printed more than %d bytes", sandboxCommandLimit)
			}
		case *process.ProcessEvent_End:
			res := CommandResult{Stdout: out.Bytes(), Stderr: errb.Bytes(), ExitCode: int(e.End.GetExitCode())}
			if sig := SignalInStatus(e.End.GetStatus()); sig != 0 {
				res.Signal = sig
				return res, fmt.Errorf("control command killed by %s", SignalName(sig))
			}
			return res, nil
		}
	}
	if err := stream.Err(); err != nil {
		return CommandResult{}, err
	}
	return CommandResult{}, fmt.Errorf("control command stream ended without an end event")
}
