package terminal

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/seam/control"
)

// Info describes a live sandtop terminal found in the sandbox.
type Info struct {
	Pid   int
	ID    string // state directory name under <runtimeRoot>/terminals
	Grace time.Duration
	// Tag is Spec.Tag, empty when none was given.
	Tag string
	// Argv is the running program's command line when known.
	Argv []string
	// Rows and Cols are the PTY size; 0 when unknown (compat).
	Rows, Cols int
	// Foreground is the foreground group (extension only; nil otherwise).
	Foreground *Foreground
}

// List finds the live PTY processes that carry a sandtop terminal
// tag, through the extension's ListTerminals or, on stock envd, List.
func (rt *Service) List(ctx context.Context) ([]Info, error) {
	var out []Info
	if rt.Supervisor != nil {
		res, err := rt.Supervisor.ListTerminals(ctx, connect.NewRequest(&sandtopv1.ListTerminalsRequest{}))
		if err != nil {
			return nil, fmt.Errorf("list terminals: %w", err)
		}
		for _, term := range res.Msg.Terminals {
			id, grace, user, ok := ParseTag(term.GetTag())
			if !ok {
				continue
			}
			info := Info{Pid: int(term.Pid), ID: id, Grace: grace, Tag: user,
				Rows: int(term.Rows), Cols: int(term.Cols)}
			// The daemon reports the runner's command; the program it
			// became is in /proc.
			if argv, err := rt.cmdline(ctx, int(term.Pid)); err == nil {
				info.Argv = argv
			}
			if term.ForegroundPgid > 1 {
				info.Foreground = &Foreground{Pgid: int(term.ForegroundPgid), InputWaiting: term.InputWaiting}
			}
			out = append(out, info)
		}
	} else {
		res, err := rt.Process.List(ctx, connect.NewRequest(&process.ListRequest{}))
		if err != nil {
			return nil, fmt.Errorf("list terminals: %w", err)
		}
		return rt.FromProcesses(ctx, res.Msg.Processes), nil
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out, nil
}

// FromProcesses finds the terminals among the processes stock envd's List
// returned: a listing that has that list reads terminals without a second
// one.
func (rt *Service) FromProcesses(ctx context.Context, procs []*process.ProcessInfo) []Info {
	var out []Info
	for _, p := range procs {
		id, grace, user, ok := ParseTag(p.GetTag())
		if !ok {
			continue
		}
		info := Info{Pid: int(p.Pid), ID: id, Grace: grace, Tag: user}
		// List shows the runner's own command; the program it became is
		// in /proc.
		if argv, err := rt.cmdline(ctx, int(p.Pid)); err == nil {
			info.Argv = argv
		}
		out = append(out, info)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out
}

// cmdline reads a process's argv from /proc in the sandbox: through the
// extension's group table, or with cat.
func (rt *Service) cmdline(ctx context.Context, pid int) ([]string, error) {
	if rt.Supervisor != nil {
		res, err := rt.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{Pgid: uint32(pid)}))
		if err != nil {
			return nil, err
		}
		for _, g := range res.Msg.Groups {
			for _, m := range g.Members {
				if int(m.Pid) == pid {
					return m.Argv, nil
				}
			}
		}
		return nil, control.ErrorOf(control.ErrNotFound, "process %d not found", pid)
	}
	b, err := rt.Plane.ReadFile(ctx, "/proc/"+strconv.Itoa(pid)+"/cmdline")
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00"), nil
}

// Attach re-attaches to a live terminal by pid: its output resumes
// from the daemon's replay ring (recent output, then live bytes), and the
// handle can write, resize, inspect, signal and terminate as if spawned.
func (rt *Service) Attach(ctx context.Context, pid int) (*Terminal, error) {
	if pid <= 1 {
		return nil, fmt.Errorf("terminal pid %d is not a valid process id", pid)
	}
	infos, err := rt.List(ctx)
	if err != nil {
		return nil, err
	}
	var info *Info
	for i := range infos {
		if infos[i].Pid == pid {
			info = &infos[i]
		}
	}
	if info == nil {
		// Any other terminal the daemon holds (one an SDK opened) can be
		// attached too; it has no state directory, and a teardown of it
		// gives the default grace.
		held, err := rt.holdsPTY(ctx, pid)
		if err != nil {
			return nil, err
		}
		if !held {
			return nil, control.ErrorOf(control.ErrNotFound, "no live terminal has pid %d", pid)
		}
		info = &Info{Pid: pid, Grace: foreignTerminalGrace}
	}
	streamCtx, stop := context.WithCancel(context.Background())
	stream, err := rt.Process.Connect(streamCtx, connect.NewRequest(&process.ConnectRequest{Process: pidSelector(pid)}))
	if err != nil {
		stop()
		return nil, fmt.Errorf("attach terminal %d: %w", pid, err)
	}
	s := connectStream{stream}
	if _, err := firstPid(s); err != nil {
		s.close()
		stop()
		return nil, fmt.Errorf("attach terminal %d: %w", pid, err)
	}
	t := newTerminal(rt, pid, info.ID, info.Grace, stop)
	go t.pump(s, &attachFilter{}, func() bool { return true }, make(chan struct{}))
	return t, nil
}

// foreignTerminalGrace is the TERM→KILL grace of a terminal sandtop did
// not spawn, which records none.
const foreignTerminalGrace = 5 * time.Second

// holdsPTY reports whether the daemon holds pid as a terminal. Only
// sandtop's daemon lists every terminal; stock envd's list does not say
// which processes have one.
func (rt *Service) holdsPTY(ctx context.Context, pid int) (bool, error) {
	if rt.Supervisor == nil {
		return false, nil
	}
	res, err := rt.Supervisor.ListTerminals(ctx, connect.NewRequest(&sandtopv1.ListTerminalsRequest{}))
	if err != nil {
		return false, fmt.Errorf("list terminals: %w", err)
	}
	for _, t := range res.Msg.GetTerminals() {
		if int(t.GetPid()) == pid {
			return true, nil
		}
	}
	return false, nil
}
