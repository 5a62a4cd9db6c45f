package backend

import (
	"context"
	"errors"
	"fmt"
	"syscall"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
)

// sessionControl is what a Terminal needs to know and do about the process
// groups of its session. The extension answers from the PTY master and
// /proc; compat asks ps and kill through Process.Start.
type sessionControl interface {
	// foreground returns the PTY's foreground group, nil when unknown.
	foreground(ctx context.Context, pid int) (*Foreground, error)
	// groups lists the session's process groups that still have a live
	// (non-zombie) member. A group id <= 1 is an error.
	groups(ctx context.Context, sid int) ([]int, error)
	// signalGroups sends sig to each group; a group that is already gone
	// is not an error.
	signalGroups(ctx context.Context, pgids []int, sig syscall.Signal) error
}

// extensionSession answers through sandtop.v1.Supervisor.
type extensionSession struct {
	sup sandtopv1connect.SupervisorClient
}

func (s extensionSession) foreground(ctx context.Context, pid int) (*Foreground, error) {
	res, err := s.sup.Foreground(ctx, connect.NewRequest(&sandtopv1.ForegroundRequest{Pid: uint32(pid)}))
	if err != nil {
		if connect.CodeOf(err) == connect.CodeNotFound {
			return nil, nil
		}
		return nil, fmt.Errorf("terminal foreground: %w", err)
	}
	if !res.Msg.Known {
		return nil, nil
	}
	if res.Msg.Pgid <= 1 {
		return nil, fmt.Errorf("cannot resolve foreground process group: daemon reported %d", res.Msg.Pgid)
	}
	return &Foreground{Pgid: int(res.Msg.Pgid), InputWaiting: res.Msg.InputWaiting}, nil
}

func (s extensionSession) groups(ctx context.Context, sid int) ([]int, error) {
	res, err := s.sup.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{Sid: uint32(sid)}))
	if err != nil {
		return nil, fmt.Errorf("list terminal session groups: %w", err)
	}
	var live []int
	for _, g := range res.Msg.Groups {
		if int(g.Sid) != sid || !anyLive(g.Members) {
			continue
		}
		if g.Pgid <= 1 {
			return nil, fmt.Errorf("unsafe process group %d in terminal session %d", g.Pgid, sid)
		}
		live = append(live, int(g.Pgid))
	}
	return live, nil
}

func anyLive(members []*sandtopv1.ProcInfo) bool {
	for _, m := range members {
		if !deadState(m.State) {
			return true
		}
	}
	return false
}

// deadState is true for zombie and dead process states, which no signal
// can affect and which count as settled.
func deadState(s string) bool {
	return s != "" && (s[0] == 'Z' || s[0] == 'X' || s[0] == 'x')
}

func (s extensionSession) signalGroups(ctx context.Context, pgids []int, sig syscall.Signal) error {
	var errs []error
	for _, g := range pgids {
		if g <= 1 {
			return fmt.Errorf("unsafe process group %d", g)
		}
		_, err := s.sup.SignalGroup(ctx, connect.NewRequest(&sandtopv1.SignalGroupRequest{Pgid: uint32(g), Signal: int32(sig)}))
		if err != nil && connect.CodeOf(err) != connect.CodeNotFound {
			errs = append(errs, fmt.Errorf("%s to process group %d: %w", signalName(sig), g, err))
		}
	}
	return errors.Join(errs...)
}
