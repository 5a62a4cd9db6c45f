package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon/runtimeroot"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/groupstate"
)

// Capabilities lists what Hello advertises.
var Capabilities = []string{"groups", "watch-groups", "signal-group", "foreground", "terminals", "read-file", "list-dir", "exit-status", "replay", CapShim, CapResolve, CapCheckProgram, CapWaitEmpty}

// supervisorService implements sandtop.v1.Supervisor.
type supervisorService struct{ d *Daemon }

var _ sandtopv1connect.SupervisorHandler = supervisorService{}

func (s supervisorService) Hello(ctx context.Context, req *connect.Request[sandtopv1.HelloRequest]) (*connect.Response[sandtopv1.HelloResponse], error) {
	d := s.d
	return connect.NewResponse(&sandtopv1.HelloResponse{
		Version:      Version,
		Capabilities: Capabilities,
		RuntimeRoot:  d.root,
		DaemonPid:    uint32(d.self.pid),
		Hostname:     d.self.hostname,
		ReplayBytes:  uint64(d.cfg.ReplayBytes),
		Environment:  d.commandEnvironment(),
	}), nil
}

// commandEnvironment is what a command started as the daemon's user gets,
// as a client's environment probe would read it; nil when the user's home
// is unusable, so that the client's probe reports it.
func (d *Daemon) commandEnvironment() []string {
	u := d.self.user
	if fi, err := os.Stat(u.home); u.home == "" || !filepath.IsAbs(u.home) || err != nil || !fi.IsDir() {
		return nil
	}
	return childEnv(u, d.baseEnv(u), nil)
}

func (s supervisorService) ListGroups(ctx context.Context, req *connect.Request[sandtopv1.ListGroupsRequest]) (*connect.Response[sandtopv1.ListGroupsResponse], error) {
	pgid, sid := req.Msg.GetPgid(), req.Msg.GetSid()
	groups := s.d.snapshotGroups(pgid, sid)
	if wait := time.Duration(req.Msg.GetWaitEmptyMs()) * time.Millisecond; wait > 0 && pgid != 0 {
		groups = s.d.waitGroupEmpty(ctx, pgid, sid, groups, min(wait, maxWaitEmpty))
	}
	return connect.NewResponse(&sandtopv1.ListGroupsResponse{Groups: groups, TakenUnixMs: time.Now().UnixMilli()}), nil
}

// CapWaitEmpty is advertised by daemons that honour wait_empty_ms.
const CapWaitEmpty = "wait-empty"

// maxWaitEmpty bounds one waiting ListGroups; a client waits longer by
// asking again.
const maxWaitEmpty = 10 * time.Second

// waitGroupEmpty looks at group pgid again until it has no live member or
// escapee, wait passes, or the client goes away, and returns the last
// look. Looks are in-process and read only the group (its shim's subtree),
// 1 ms apart at first, then up to 16 ms: a group that takes its SIGTERM
// is seen empty within a millisecond or two of its last exit.
func (d *Daemon) waitGroupEmpty(ctx context.Context, pgid, sid uint32, groups []*sandtopv1.Group, wait time.Duration) []*sandtopv1.Group {
	deadline := time.Now().Add(wait)
	pause := time.Millisecond
	for groupsLive(groups) {
		left := time.Until(deadline)
		if left <= 0 {
			return groups
		}
		t := time.NewTimer(min(pause, left))
		select {
		case <-ctx.Done():
			t.Stop()
			return groups
		case <-d.shuttingDown():
			t.Stop()
			return groups
		case <-t.C:
		}
		pause = min(2*pause, 16*time.Millisecond)
		groups = d.snapshotGroups(pgid, sid)
	}
	return groups
}

// groupsLive says whether any member or escapee of groups still runs.
func groupsLive(groups []*sandtopv1.Group) bool {
	for _, g := range groups {
		for _, m := range g.GetMembers() {
			if groupstate.ProcLive(m.GetState()) {
				return true
			}
		}
		for _, m := range g.GetEscapees() {
			if groupstate.ProcLive(m.GetState()) {
				return true
			}
		}
	}
	return false
}

func (s supervisorService) WatchGroups(ctx context.Context, req *connect.Request[sandtopv1.WatchGroupsRequest], stream *connect.ServerStream[sandtopv1.WatchGroupsResponse]) error {
	interval := time.Duration(req.Msg.GetIntervalMs()) * time.Millisecond
	switch {
	case interval == 0:
		interval = time.Second
	case interval < 100*time.Millisecond:
		interval = 100 * time.Millisecond
	}
	timer := time.NewTimer(interval)
	defer timer.Stop()
	var last uint64
	first := true
	for {
		// The read's cost is the CPU it took on its thread, not its wall
		// time, which a loaded machine stretches.
		runtime.LockOSThread()
		cpu0 := threadCPU()
		groups := s.d.groupsFrom(s.d.watch.read(first), 0, 0, time.Now())
		fp := groupsFingerprint(groups)
		cost := threadCPU() - cpu0
		runtime.UnlockOSThread()
		if first || fp != last {
			first, last = false, fp
			if err := stream.Send(&sandtopv1.WatchGroupsResponse{Groups: groups, TakenUnixMs: time.Now().UnixMilli()}); err != nil {
				return err
			}
		}
		timer.Reset(watchWait(interval, cost))
		select {
		case <-timer.C:
		case <-ctx.Done():
			return nil
		case <-s.d.shuttingDown():
			return connect.NewError(connect.CodeUnavailable, errShuttingDown)
		}
	}
}

// watchBudget is the share of one core a watcher may take. A table read
// costs more with every process in the sandbox (tens of milliseconds at
// 1,000 groups on a small VM), so a large sandbox is read less often than
// asked, rather than a watching TUI costing the sandbox a tenth of a core.
const watchBudget = 0.02

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		return 0
	}
	return time.Duration(ts.Nano())
}

// watchWait is the pause before the next read: the interval asked for, or
// longer when the last read cost more than the budget allows.
func watchWait(interval, cost time.Duration) time.Duration {
	return max(interval, time.Duration(float64(cost)/watchBudget)-cost)
}

func (s supervisorService) SignalGroup(ctx context.Context, req *connect.Request[sandtopv1.SignalGroupRequest]) (*connect.Response[sandtopv1.SignalGroupResponse], error) {
	pgid, sig := req.Msg.GetPgid(), req.Msg.GetSignal()
	switch {
	case sig < 1 || sig > 64:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("signal %d is out of range 1..64", sig))
	case pgid <= 1:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("pgid %d is not a process group the daemon may signal (must be > 1)", pgid))
	case pgid > 1<<22:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("pgid %d is beyond the largest Linux pid", pgid))
	case int(pgid) == s.d.self.pgid:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("pgid %d is the daemon's own process group", pgid))
	}
	// A shim leads its own session and group, which holds it alone.
	if err := s.d.checkNotShim(int(pgid)); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if s.d.maybeUnit(int(pgid)) {
		// A plain Start's process and its descendants, in the daemon's own
		// group: signalled one by one (see plainUnits).
		signal := syscall.Signal(sig)
		if p := s.d.reg.byPid(pgid); p != nil && !p.exited() && (signal == syscall.SIGTERM || signal == syscall.SIGKILL) {
			p.armStop()
		}
		if delivered, ok := s.d.signalUnit(int(pgid), signal); ok {
			return connect.NewResponse(&sandtopv1.SignalGroupResponse{Delivered: delivered}), nil
		}
	}
	if err := s.d.checkSandboxGroup(int(pgid)); err != nil {
		return nil, err
	}
	signal := syscall.Signal(sig)
	if p := s.d.reg.byPid(pgid); p != nil && !p.exited() && (signal == syscall.SIGTERM || signal == syscall.SIGKILL) {
		p.armStop()
	}
	err := killGroup(int(pgid), signal)
	var escapees []*sandtopv1.ProcInfo
	if req.Msg.GetEscapees() {
		escapees = s.d.signalEscapees(int(pgid), signal)
	}
	switch {
	case err == nil:
		return connect.NewResponse(&sandtopv1.SignalGroupResponse{Delivered: true, Escapees: escapees}), nil
	case errors.Is(err, syscall.ESRCH):
		return connect.NewResponse(&sandtopv1.SignalGroupResponse{Delivered: len(escapees) > 0, Escapees: escapees}), nil
	case errors.Is(err, syscall.EPERM):
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("signal %d to group %d: %w", sig, pgid, err))
	default:
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("signal %d to group %d: %w", sig, pgid, err))
	}
}

// checkSandboxGroup refuses a live group that is not the sandbox's (one the
// daemon does not list), so a client cannot use the daemon to signal
// processes it never started. A group with no member at all passes: the
// signal then finds nobody.
func (d *Daemon) checkSandboxGroup(pgid int) error {
	// A shim's group, or one a live start of ours leads, is the sandbox's
	// without reading all of /proc (every teardown signals at least twice).
	if d.reg.shimByPgid(pgid) != nil || d.reg.shimlessByPgid(pgid) != nil {
		return nil
	}
	if p := d.reg.byPid(uint32(pgid)); p != nil && !p.exited() {
		return nil
	}
	t := readProcTable()
	if d.sandboxGroups(t, d.startedProcs())[pgid] {
		return nil
	}
	for _, st := range t.stats {
		if st.pgid == pgid {
			return connect.NewError(connect.CodePermissionDenied, fmt.Errorf(
				"process group %d is not in this sandbox: the daemon signals only groups it started, adopted or lists (see ListGroups)", pgid))
		}
	}
	return nil
}

// ptyProc finds a live process by pid and checks it has a terminal.
func (s supervisorService) ptyProc(pid uint32) (*proc, error) {
	p := s.d.reg.byPid(pid)
	if p == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process %d not found", pid))
	}
	if !p.isPTY() {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("process %d has no terminal", pid))
	}
	return p, nil
}

func (s supervisorService) Foreground(ctx context.Context, req *connect.Request[sandtopv1.ForegroundRequest]) (*connect.Response[sandtopv1.ForegroundResponse], error) {
	p, err := s.ptyProc(req.Msg.GetPid())
	if err != nil {
		return nil, err
	}
	res := &sandtopv1.ForegroundResponse{}
	if p.exited() {
		return connect.NewResponse(res), nil
	}
	pgid, err := p.foregroundPgid()
	if err != nil || pgid <= 0 {
		return connect.NewResponse(res), nil
	}
	res.Known, res.Pgid = true, uint32(pgid)
	res.InputWaiting = groupWaitsOnTerminal(pgid, p.ttyName)
	return connect.NewResponse(res), nil
}

func (s supervisorService) ListTerminals(ctx context.Context, req *connect.Request[sandtopv1.ListTerminalsRequest]) (*connect.Response[sandtopv1.ListTerminalsResponse], error) {
	res := &sandtopv1.ListTerminalsResponse{}
	for _, p := range s.d.reg.liveProcs() {
		if !p.isPTY() || p.exited() {
			continue
		}
		t := &sandtopv1.Terminal{
			Pid:             p.pid,
			Sid:             p.pid,
			Tag:             p.tag,
			Argv:            p.argv,
			StartTimeUnixMs: p.started.UnixMilli(),
		}
		if cols, rows, err := p.size(); err == nil {
			t.Cols, t.Rows = uint32(cols), uint32(rows)
		}
		if pgid, err := p.foregroundPgid(); err == nil && pgid > 0 {
			t.ForegroundPgid = uint32(pgid)
			t.InputWaiting = groupWaitsOnTerminal(pgid, p.ttyName)
		}
		res.Terminals = append(res.Terminals, t)
	}
	return connect.NewResponse(res), nil
}

func (s supervisorService) ReadFile(ctx context.Context, req *connect.Request[sandtopv1.ReadFileRequest]) (*connect.Response[sandtopv1.ReadFileResponse], error) {
	if req.Msg.GetPath() == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("path is empty"))
	}
	f, _, err := s.d.runtimeRoot().Open(req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, size, eof, err := runtimeroot.ReadRange(f, req.Msg.GetPath(), req.Msg.GetOffset(), req.Msg.GetLength())
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&sandtopv1.ReadFileResponse{Data: data, Size: size, Eof: eof}), nil
}

func (s supervisorService) ListDir(ctx context.Context, req *connect.Request[sandtopv1.ListDirRequest]) (*connect.Response[sandtopv1.ListDirResponse], error) {
	f, _, err := s.d.runtimeRoot().Open(req.Msg.GetPath())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("stat %q: %w", clip(req.Msg.GetPath()), err))
	}
	if !fi.IsDir() {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("path %q is not a directory", clip(req.Msg.GetPath())))
	}
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, fmt.Errorf("list %q: %w", clip(req.Msg.GetPath()), err))
	}
	res := &sandtopv1.ListDirResponse{}
	for _, e := range entries {
		de := &sandtopv1.DirEntry{Name: e.Name(), Dir: e.IsDir()}
		if info, err := e.Info(); err == nil {
			de.Size, de.Mode, de.MtimeUnixMs = uint64(max(info.Size(), 0)), uint32(info.Mode()), info.ModTime().UnixMilli()
		}
		res.Entries = append(res.Entries, de)
	}
	return connect.NewResponse(res), nil
}

func (s supervisorService) ExitStatus(ctx context.Context, req *connect.Request[sandtopv1.ExitStatusRequest]) (*connect.Response[sandtopv1.ExitStatusResponse], error) {
	p := s.d.reg.byPid(req.Msg.GetPid())
	if p == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process %d not found", req.Msg.GetPid()))
	}
	res := &sandtopv1.ExitStatusResponse{}
	// The leader's status is known once it is reaped; the end event (and
	// exited()) may still wait for its output pipes, and a client that saw
	// the end event must find the status here.
	if !p.leaderReaped() {
		return connect.NewResponse(res), nil
	}
	res.Exited = true
	res.ExitedUnixMs = p.exitedAt.UnixMilli()
	if ws, ok := p.waitStatus(); ok {
		if ws.Signaled() {
			res.ExitCode, res.Signal, res.CoreDumped = -1, int32(ws.Signal()), ws.CoreDump()
		} else {
			res.ExitCode = int32(ws.ExitStatus())
		}
	}
	return connect.NewResponse(res), nil
}
