package backend

import (
	"context"
	"fmt"
	"sync"
	"time"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/groupstate"
)

// OneTable scopes a read of the sandbox: within the returned context, the
// full process table is read once on sandtop's daemon and shared by every
// call that needs it. A listing then judges its groups, finds agents'
// roots and shows members from one table, in one round trip instead of
// three (each a read of all of /proc on the daemon).
func OneTable(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneTableKey{}, &tableMemo{})
}

type oneTableKey struct{}

type tableMemo struct {
	once sync.Once
	resp *sandtopv1.ListGroupsResponse
	err  error
}

// fullTable is the daemon's grouped process table, shared within OneTable.
func (c extensionControl) fullTable(ctx context.Context) (*sandtopv1.ListGroupsResponse, error) {
	fetch := func() (*sandtopv1.ListGroupsResponse, error) {
		resp, err := c.sup.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
		if err != nil {
			return nil, fmt.Errorf("list process groups: %w", err)
		}
		return resp.Msg, nil
	}
	m, ok := ctx.Value(oneTableKey{}).(*tableMemo)
	if !ok {
		return fetch()
	}
	m.once.Do(func() { m.resp, m.err = fetch() })
	return m.resp, m.err
}

// Member is one live process of a group as sandtop's daemon lists it.
type Member struct {
	Pid, Ppid  int
	State      string
	Argv       []string
	CPUPercent float64
	RSSBytes   uint64
	Started    time.Time // zero when unknown
}

// Members lists each group's live members and escapees, by pgid, with argv
// and usage. Only sandtop's daemon knows them (errUnsupported elsewhere);
// within OneTable it costs no further read.
func (r *Runtime) Members(ctx context.Context) (members, escapees map[int][]Member, err error) {
	ext, ok := r.control.(extensionControl)
	if !ok {
		return nil, nil, errUnsupported
	}
	table, err := ext.fullTable(ctx)
	if err != nil {
		return nil, nil, err
	}
	members, escapees = map[int][]Member{}, map[int][]Member{}
	add := func(to map[int][]Member, pgid int, m *sandtopv1.ProcInfo) {
		if !groupstate.ProcLive(m.GetState()) {
			return
		}
		p := Member{Pid: int(m.GetPid()), Ppid: int(m.GetPpid()), State: m.GetState(), Argv: m.GetArgv(),
			CPUPercent: m.GetCpuPercent(), RSSBytes: m.GetRssBytes()}
		if ms := m.GetStartTimeUnixMs(); ms > 0 {
			p.Started = time.UnixMilli(ms).UTC()
		}
		to[pgid] = append(to[pgid], p)
	}
	for _, g := range table.GetGroups() {
		for _, m := range g.GetMembers() {
			add(members, int(g.GetPgid()), m)
		}
		for _, m := range g.GetEscapees() {
			add(escapees, int(g.GetPgid()), m)
		}
	}
	return members, escapees, nil
}
