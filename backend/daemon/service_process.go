package daemon

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/groupstate"
)

var errShuttingDown = errors.New("daemon is shutting down")

// processService implements process.Process.
type processService struct{ d *Daemon }

var _ processconnect.ProcessHandler = processService{}

func (s processService) Start(ctx context.Context, req *connect.Request[process.StartRequest], stream *connect.ServerStream[process.StartResponse]) error {
	d := s.d
	var name string
	if h := req.Header().Get("Authorization"); h != "" {
		n, err := parseBasicUser(h) // Guard has refused a malformed one already
		if err != nil {
			return connect.NewError(connect.CodeUnauthenticated, err)
		}
		name = n
	}
	u, err := d.resolveUser(name)
	if err != nil {
		return err
	}
	p, sub, err := d.spawn(spawnRequest{req: req.Msg, user: u, sessionDir: req.Header().Get(SessionDirHeader), spills: req.Header().Get(SpillHeader),
		checkProgram: req.Header().Get(CheckProgramHeader) != ""})
	if err != nil {
		return err
	}
	closeAfterResponse(ctx, stream.ResponseHeader())
	send := func(ev *process.ProcessEvent) error { return stream.Send(&process.StartResponse{Event: ev}) }
	if err := send(startEvent(p.pid)); err != nil {
		sub.unsubscribe()
		return err
	}
	// The process outlives this stream: leaving here only drops the subscriber.
	return d.forward(ctx, sub, keepaliveInterval(req.Header()), eventBytes(req.Header()), send)
}

func (s processService) Connect(ctx context.Context, req *connect.Request[process.ConnectRequest], stream *connect.ServerStream[process.ConnectResponse]) error {
	p, err := s.d.reg.lookup(req.Msg.GetProcess())
	if err != nil {
		return err
	}
	sub := p.out.subscribe(true)
	closeAfterResponse(ctx, stream.ResponseHeader())
	send := func(ev *process.ProcessEvent) error { return stream.Send(&process.ConnectResponse{Event: ev}) }
	if err := send(startEvent(p.pid)); err != nil {
		sub.unsubscribe()
		return err
	}
	return s.d.forward(ctx, sub, keepaliveInterval(req.Header()), eventBytes(req.Header()), send)
}

func (s processService) List(ctx context.Context, req *connect.Request[process.ListRequest]) (*connect.Response[process.ListResponse], error) {
	res := &process.ListResponse{}
	for _, p := range s.d.reg.liveProcs() {
		if p.exited() {
			continue
		}
		res.Processes = append(res.Processes, &process.ProcessInfo{Config: p.config, Pid: p.pid, Tag: p.tag})
	}
	return connect.NewResponse(res), nil
}

func (s processService) SendInput(ctx context.Context, req *connect.Request[process.SendInputRequest]) (*connect.Response[process.SendInputResponse], error) {
	p, err := s.d.reg.lookupLive(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if err := writeProcessInput(ctx, p, req.Msg.GetInput()); err != nil {
		return nil, err
	}
	return connect.NewResponse(&process.SendInputResponse{}), nil
}

func (s processService) StreamInput(ctx context.Context, stream *connect.ClientStream[process.StreamInputRequest]) (*connect.Response[process.StreamInputResponse], error) {
	if !stream.Receive() {
		if err := stream.Err(); err != nil {
			return nil, err
		}
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("stream input must begin with a start message naming the process; the stream was empty"))
	}
	start := stream.Msg().GetStart()
	if start == nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("stream input must begin with a start message naming the process; got %s first", inputKind(stream.Msg())))
	}
	p, err := s.d.reg.lookupLive(start.GetProcess())
	if err != nil {
		return nil, err
	}
	for stream.Receive() {
		switch ev := stream.Msg().GetEvent().(type) {
		case *process.StreamInputRequest_Data:
			if err := writeProcessInput(ctx, p, ev.Data.GetInput()); err != nil {
				return nil, err
			}
		case *process.StreamInputRequest_Keepalive:
		case *process.StreamInputRequest_Start:
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("stream input got a second start message; send it only once, first"))
		default:
			return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("stream input message has no event"))
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return connect.NewResponse(&process.StreamInputResponse{}), nil
}

func inputKind(m *process.StreamInputRequest) string {
	switch m.GetEvent().(type) {
	case *process.StreamInputRequest_Data:
		return "data"
	case *process.StreamInputRequest_Keepalive:
		return "keepalive"
	default:
		return "an empty message"
	}
}

// writeProcessInput writes one input message, giving up if the caller goes
// away while the process is not reading.
func writeProcessInput(ctx context.Context, p *proc, in *process.ProcessInput) error {
	var data []byte
	var toPTY bool
	switch v := in.GetInput().(type) {
	case *process.ProcessInput_Stdin:
		data = v.Stdin
	case *process.ProcessInput_Pty:
		data, toPTY = v.Pty, true
	default:
		return connect.NewError(connect.CodeInvalidArgument, errors.New("input is empty: set stdin or pty"))
	}
	stop := context.AfterFunc(ctx, func() { p.interruptInput() })
	defer stop()
	err := p.writeInput(data, toPTY)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, errNotPTY), errors.Is(err, errIsPTY):
		return connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("process %d %w", p.pid, err))
	case errors.Is(err, errStdinClosed):
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("process %d: %w", p.pid, err))
	case ctx.Err() != nil:
		return connect.NewError(connect.CodeCanceled, fmt.Errorf("write input to process %d: %w", p.pid, ctx.Err()))
	default:
		return connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("write input to process %d: %w", p.pid, err))
	}
}

func (s processService) SendSignal(ctx context.Context, req *connect.Request[process.SendSignalRequest]) (*connect.Response[process.SendSignalResponse], error) {
	if pid := req.Msg.GetProcess().GetPid(); pid != 0 {
		if err := s.d.checkNotShim(int(pid)); err != nil {
			return nil, connect.NewError(connect.CodeInvalidArgument, err)
		}
	}
	// envd looks the process up first, then refuses other signals.
	p, err := s.d.reg.lookupLive(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	var sig syscall.Signal
	switch req.Msg.GetSignal() {
	case process.Signal_SIGNAL_SIGTERM:
		sig = syscall.SIGTERM
	case process.Signal_SIGNAL_SIGKILL:
		sig = syscall.SIGKILL
	default:
		return nil, connect.NewError(connect.CodeUnimplemented, fmt.Errorf("invalid signal %d: use SIGTERM (15) or SIGKILL (9), or Supervisor/SignalGroup for others", req.Msg.GetSignal()))
	}
	if err := s.d.signalProc(p, sig); err != nil {
		return nil, err
	}
	return connect.NewResponse(&process.SendSignalResponse{}), nil
}

// signalProc signals the process as envd does, the started pid alone; a
// session-dir start (a group under a shim) gets its whole group. It
// also stops the end event from waiting on leftover pipe holders.
func (d *Daemon) signalProc(p *proc, sig syscall.Signal) error {
	p.armStop()
	var firstErr error
	switch {
	case p.shim != nil && p.leaderGone():
		// The leader is reaped, so its pid (and, once the group empties,
		// the group id) may be another process's by now: only members
		// found under the group's shim are signalled.
		d.signalShimMembers(p.shim, sig)
	case p.shim != nil:
		firstErr = killGroup(int(p.pid), sig)
	case p.leaderGone():
		// Reaped: the pid is no longer the started process's.
		firstErr = syscall.ESRCH
	default:
		firstErr = syscall.Kill(int(p.pid), sig)
	}
	if errors.Is(firstErr, syscall.ESRCH) {
		firstErr = nil
	}
	if firstErr != nil {
		return connect.NewError(connect.CodeInternal, fmt.Errorf("signal %s to process %d: %w", sig, p.pid, firstErr))
	}
	return nil
}

// signalShimMembers signals, one by one, the live members of a shim's group
// found in the shim's subtree (where all of them are), never the group id.
func (d *Daemon) signalShimMembers(l *shimLink, sig syscall.Signal) {
	procs, ok := subtree(l.pid)
	if !ok {
		t := readProcTable()
		procs = procs[:0]
		var walk func(int)
		walk = func(pid int) {
			for _, c := range t.children[pid] {
				procs = append(procs, t.stats[c])
				walk(c)
			}
		}
		walk(l.pid)
	}
	for _, st := range procs {
		if st.pgid == l.pgid && groupstate.ProcLive(st.state) {
			_ = syscall.Kill(st.pid, sig)
		}
	}
}

// killGroup is the one place the daemon signals a group; it never touches
// pgid <= 1 (kill(0) or kill(-1) would hit the daemon or everything).
func killGroup(pgid int, sig syscall.Signal) error {
	if pgid <= 1 {
		return fmt.Errorf("refusing to signal process group %d", pgid)
	}
	return syscall.Kill(-pgid, sig)
}

func (s processService) Update(ctx context.Context, req *connect.Request[process.UpdateRequest]) (*connect.Response[process.UpdateResponse], error) {
	p, err := s.d.reg.lookupLive(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if !p.isPTY() {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("process %d has no terminal to resize", p.pid))
	}
	size := req.Msg.GetPty().GetSize()
	if size == nil {
		return connect.NewResponse(&process.UpdateResponse{}), nil
	}
	if size.GetCols() == 0 || size.GetRows() == 0 || size.GetCols() > 0xffff || size.GetRows() > 0xffff {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("pty size %dx%d is out of range (1..65535)", size.GetCols(), size.GetRows()))
	}
	if err := setWinsize(p.pty, uint16(size.GetCols()), uint16(size.GetRows())); err != nil {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("resize terminal of process %d: %w", p.pid, err))
	}
	return connect.NewResponse(&process.UpdateResponse{}), nil
}

func (s processService) CloseStdin(ctx context.Context, req *connect.Request[process.CloseStdinRequest]) (*connect.Response[process.CloseStdinResponse], error) {
	p, err := s.d.reg.lookupLive(req.Msg.GetProcess())
	if err != nil {
		return nil, err
	}
	if err := p.closeStdin(); err != nil {
		code := connect.CodeFailedPrecondition
		if errors.Is(err, errIsPTY) {
			code = connect.CodeInvalidArgument
		}
		return nil, connect.NewError(code, fmt.Errorf("process %d: %w", p.pid, err))
	}
	return connect.NewResponse(&process.CloseStdinResponse{}), nil
}
