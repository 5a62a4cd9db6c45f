package control

import (
	"context"
	"fmt"
	"sync"
	"time"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// OneTable scopes a read of the sandbox: within the returned context, the
// full process table is read once (one ListGroups on sandtop's daemon, one
// ps on stock envd) and shared by every call that needs it. A listing then judges its groups, finds agents'
// roots and shows members from one table, in one round trip instead of
// three (each a read of all of /proc on the daemon).
func OneTable(ctx context.Context) context.Context {
	return context.WithValue(ctx, oneTableKey{}, &tableMemo{})
}

type oneTableKey struct{}

// WithTable is OneTable with the table already read: a watch judges its
// published state against the table it already holds instead of asking the
// daemon to read all of /proc again.
func WithTable(ctx context.Context, resp *sandtopv1.ListGroupsResponse) context.Context {
	m := &tableMemo{resp: resp}
	m.once.Do(func() {})
	return context.WithValue(ctx, oneTableKey{}, m)
}

type tableMemo struct {
	once sync.Once
	resp *sandtopv1.ListGroupsResponse
	err  error
	// ps is the table on stock envd (ReadProcessTable).
	psOnce  sync.Once
	ps      []ProcessRow
	psTaken time.Time
	psErr   error
}

// FullTable is the daemon's grouped process table, shared within OneTable.
func (c Extension) FullTable(ctx context.Context) (*sandtopv1.ListGroupsResponse, error) {
	fetch := func() (*sandtopv1.ListGroupsResponse, error) {
		resp, err := c.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{}))
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

// GroupsTable is the daemon's table of the given process groups alone,
// each read by itself: what FullTable holds of them.
func (c Extension) GroupsTable(ctx context.Context, pgids []int) (*sandtopv1.ListGroupsResponse, error) {
	out := &sandtopv1.ListGroupsResponse{}
	asked, listed := map[int]bool{}, map[uint32]bool{}
	for _, pgid := range pgids {
		if pgid <= 0 || asked[pgid] {
			continue
		}
		asked[pgid] = true
		resp, err := c.Supervisor.ListGroups(ctx, connect.NewRequest(&sandtopv1.ListGroupsRequest{Pgid: uint32(pgid)}))
		if err != nil {
			return nil, fmt.Errorf("list process group %d: %w", pgid, err)
		}
		if out.TakenUnixMs == 0 || resp.Msg.GetTakenUnixMs() < out.TakenUnixMs {
			out.TakenUnixMs = resp.Msg.GetTakenUnixMs() // the oldest reading
		}
		for _, g := range resp.Msg.GetGroups() {
			if !listed[g.GetPgid()] {
				listed[g.GetPgid()] = true
				out.Groups = append(out.Groups, g)
			}
		}
	}
	return out, nil
}
