package seam

import (
	"context"
	"errors"
	"slices"
	"time"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/seam/terminal"
	"sandtop/sandbox"
)

// extFeed follows the Supervisor's WatchGroups stream, which speaks only
// when groups change; terminals (size, foreground, input waiting) are
// re-read with each table and on a slower tick.
type extFeed struct {
	sup   supervisorReader
	msgs  chan *sandtopv1.WatchGroupsResponse
	err   error // why the stream ended; read after msgs is closed
	stop  context.CancelFunc
	done  chan struct{}
	tick  *time.Ticker
	last  *sandtopv1.WatchGroupsResponse
	terms []sandbox.Terminal
}

// table is the last table read, in ListGroups' terms; nil before the first.
func (f *extFeed) table() *sandtopv1.ListGroupsResponse {
	if f.last == nil {
		return nil
	}
	return &sandtopv1.ListGroupsResponse{Groups: f.last.GetGroups(), TakenUnixMs: f.last.GetTakenUnixMs()}
}

// supervisorReader is the part of the Supervisor a watch reads.
type supervisorReader interface {
	WatchGroups(context.Context, *connect.Request[sandtopv1.WatchGroupsRequest]) (*connect.ServerStreamForClient[sandtopv1.WatchGroupsResponse], error)
	ListTerminals(context.Context, *connect.Request[sandtopv1.ListTerminalsRequest]) (*connect.Response[sandtopv1.ListTerminalsResponse], error)
}

func openExtFeed(ctx context.Context, sup supervisorReader, interval time.Duration) (*extFeed, error) {
	ctx, stop := context.WithCancel(ctx)
	stream, err := sup.WatchGroups(ctx, connect.NewRequest(&sandtopv1.WatchGroupsRequest{IntervalMs: uint32(interval / time.Millisecond)}))
	if err != nil {
		stop()
		return nil, err
	}
	f := &extFeed{sup: sup, msgs: make(chan *sandtopv1.WatchGroupsResponse), stop: stop, done: make(chan struct{}), tick: time.NewTicker(2 * interval)}
	go func() {
		defer close(f.done)
		defer stream.Close()
		defer close(f.msgs)
		for stream.Receive() {
			select {
			case f.msgs <- stream.Msg():
			case <-ctx.Done():
				return
			}
		}
		f.err = stream.Err()
		if f.err == nil {
			f.err = errors.New("the daemon ended the group stream")
		}
	}()
	return f, nil
}

func (f *extFeed) next(ctx context.Context) (liveTable, error) {
	for {
		fresh := false
		select {
		case msg, ok := <-f.msgs:
			if !ok {
				return liveTable{}, f.err
			}
			f.last, fresh = msg, true
		case <-f.tick.C:
			if f.last == nil {
				continue
			}
		case <-ctx.Done():
			return liveTable{}, ctx.Err()
		}
		terms := readExtTerminals(ctx, f.sup, f.terms)
		if !fresh && sameTerminals(terms, f.terms) {
			// The tick found nothing new: say so rather than convert the
			// whole table again for a snapshot equal to the last.
			return liveTable{unchanged: true}, nil
		}
		f.terms = terms
		return extTable(f.last.GetTakenUnixMs(), f.last.GetGroups(), f.terms), nil
	}
}

// sameTerminals says whether two readings of the terminals agree.
func sameTerminals(a, b []sandbox.Terminal) bool {
	return slices.EqualFunc(a, b, func(x, y sandbox.Terminal) bool {
		return x.PID == y.PID && x.SID == y.SID && x.Sandtop == y.Sandtop && x.ID == y.ID && x.Tag == y.Tag &&
			slices.Equal(x.Argv, y.Argv) && x.Rows == y.Rows && x.Cols == y.Cols &&
			x.ForegroundPGID == y.ForegroundPGID && x.InputWaiting == y.InputWaiting && x.Started.Equal(y.Started)
	})
}

func (f *extFeed) close() {
	f.stop()
	<-f.done
	f.tick.Stop()
}

// extTable converts the daemon's grouped table.
func extTable(takenMs int64, groups []*sandtopv1.Group, terms []sandbox.Terminal) liveTable {
	t := liveTable{taken: time.UnixMilli(takenMs), shims: map[int]shimGroup{}, terminals: terms}
	for _, g := range groups {
		t.groups = append(t.groups, groupFromWire(g))
		if g.GetStateDir() != "" {
			t.shims[int(g.GetPgid())] = shimGroup{stateDir: g.GetStateDir(), argv: g.GetArgv()}
		}
	}
	return t
}

// readExtTerminals lists the daemon's terminals; a failed read keeps the
// previous list (the group stream says if the daemon is gone).
func readExtTerminals(ctx context.Context, sup supervisorReader, prev []sandbox.Terminal) []sandbox.Terminal {
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	res, err := sup.ListTerminals(tctx, connect.NewRequest(&sandtopv1.ListTerminalsRequest{}))
	if err != nil {
		return prev
	}
	out := make([]sandbox.Terminal, 0, len(res.Msg.GetTerminals()))
	for _, tm := range res.Msg.GetTerminals() {
		tv := sandbox.Terminal{
			PID: int(tm.GetPid()), SID: int(tm.GetSid()), Argv: tm.GetArgv(),
			Rows: int(tm.GetRows()), Cols: int(tm.GetCols()), ForegroundPGID: int(tm.GetForegroundPgid()),
			InputWaiting: tm.GetInputWaiting(), Started: time.UnixMilli(tm.GetStartTimeUnixMs()),
		}
		tv.ID, _, tv.Tag, tv.Sandtop = terminal.ParseTag(tm.GetTag())
		out = append(out, tv)
	}
	return out
}

// groupFromWire maps the daemon's group; its origin and state are judged
// later, by compose.
func groupFromWire(g *sandtopv1.Group) sandbox.Group {
	out := sandbox.Group{PGID: int(g.GetPgid()), SID: int(g.GetSid()), LeaderPID: int(g.GetStartedPid()), Tag: g.GetTag(), PTY: g.GetPty()}
	if g.GetOrigin() == string(sandbox.OriginEnvd) {
		out.Origin = sandbox.OriginEnvd
	}
	out.Members = processesFromWire(g.GetMembers())
	out.Escapees = processesFromWire(g.GetEscapees())
	return out
}

func processesFromWire(ps []*sandtopv1.ProcInfo) []sandbox.Process {
	if len(ps) == 0 {
		return nil
	}
	out := make([]sandbox.Process, len(ps))
	for i, p := range ps {
		out[i] = sandbox.Process{
			PID: int(p.GetPid()), PPID: int(p.GetPpid()), PGID: int(p.GetPgid()), SID: int(p.GetSid()),
			State: p.GetState(), Argv: p.GetArgv(), Comm: p.GetComm(), TTY: p.GetTty(),
			CPUPercent: p.GetCpuPercent(), RSSBytes: p.GetRssBytes(),
		}
		if ms := p.GetStartTimeUnixMs(); ms > 0 {
			out[i].Started = time.UnixMilli(ms)
		}
	}
	return out
}
