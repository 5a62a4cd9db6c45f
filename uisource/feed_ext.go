package uisource

import (
	"context"
	"errors"
	"time"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/ui"
)

// extFeed follows the Supervisor's WatchGroups stream, which speaks only
// when groups change; terminals (size, foreground, input waiting) are
// re-read with each table and on a slower tick.
type extFeed struct {
	s     *backendSource
	msgs  chan *sandtopv1.WatchGroupsResponse
	err   error // why the stream ended; read after msgs is closed
	stop  context.CancelFunc
	done  chan struct{}
	tick  *time.Ticker
	last  *sandtopv1.WatchGroupsResponse
	terms []ui.Terminal
}

func (s *backendSource) openExtFeed(ctx context.Context) (*extFeed, error) {
	ctx, stop := context.WithCancel(ctx)
	stream, err := s.c.Supervisor.WatchGroups(ctx, connect.NewRequest(&sandtopv1.WatchGroupsRequest{IntervalMs: uint32(s.opts.Interval / time.Millisecond)}))
	if err != nil {
		stop()
		return nil, err
	}
	f := &extFeed{s: s, msgs: make(chan *sandtopv1.WatchGroupsResponse), stop: stop, done: make(chan struct{}), tick: time.NewTicker(2 * s.opts.Interval)}
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
		select {
		case msg, ok := <-f.msgs:
			if !ok {
				return liveTable{}, f.err
			}
			f.last = msg
		case <-f.tick.C:
			if f.last == nil {
				continue
			}
		case <-ctx.Done():
			return liveTable{}, ctx.Err()
		}
		return f.table(ctx), nil
	}
}

func (f *extFeed) close() {
	f.stop()
	<-f.done
	f.tick.Stop()
}

// table converts the last stream message and reads the terminals; a failed
// terminal read keeps the previous list (the stream says if the daemon is
// gone).
func (f *extFeed) table(ctx context.Context) liveTable {
	t := liveTable{taken: time.UnixMilli(f.last.GetTakenUnixMs())}
	t.shims = map[int]shimGroup{}
	for _, g := range f.last.GetGroups() {
		t.groups = append(t.groups, convertGroup(g))
		if g.GetStateDir() != "" {
			t.shims[int(g.GetPgid())] = shimGroup{stateDir: g.GetStateDir(), argv: g.GetArgv()}
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	if res, err := f.s.c.Supervisor.ListTerminals(tctx, connect.NewRequest(&sandtopv1.ListTerminalsRequest{})); err == nil {
		f.terms = f.terms[:0:0]
		for _, tm := range res.Msg.GetTerminals() {
			f.terms = append(f.terms, ui.Terminal{
				PID: int(tm.GetPid()), SID: int(tm.GetSid()), ForegroundPGID: int(tm.GetForegroundPgid()),
				InputWaiting: tm.GetInputWaiting(), Rows: int(tm.GetRows()), Cols: int(tm.GetCols()),
				Argv: tm.GetArgv(), Tag: tm.GetTag(), Started: time.UnixMilli(tm.GetStartTimeUnixMs()),
			})
		}
	}
	t.terminals = f.terms
	return t
}

// convertGroup maps the wire group.
func convertGroup(g *sandtopv1.Group) ui.Group {
	out := ui.Group{PGID: int(g.GetPgid()), SID: int(g.GetSid()), LeaderPID: int(g.GetStartedPid()), Tag: g.GetTag(), PTY: g.GetPty()}
	for _, p := range g.GetMembers() {
		out.Members = append(out.Members, ui.Process{
			PID: int(p.GetPid()), PPID: int(p.GetPpid()), PGID: int(p.GetPgid()), SID: int(p.GetSid()),
			State: p.GetState(), Argv: p.GetArgv(), Comm: p.GetComm(), TTY: p.GetTty(),
			Started: time.UnixMilli(p.GetStartTimeUnixMs()), CPUPercent: p.GetCpuPercent(), RSSBytes: p.GetRssBytes(),
		})
	}
	out.Started = out.StartedAt()
	return out
}
