package ui

import (
	"sort"
	"strconv"

	"sandtop/sandbox"
)

// rowKind is what a tree row stands for.
type rowKind int

const (
	rowSession rowKind = iota
	rowGroup
	rowProcess
)

// row is one line of the sessions → groups → processes tree.
type row struct {
	kind  rowKind
	sid   int
	group *sandbox.Group   // for group and process rows
	proc  *sandbox.Process // for process rows
	// groups counts a session's groups; last says whether this is the last
	// child, for the tree glyphs.
	groups int
	last   bool
	// solo marks a group alone in its session. Every group sandtop starts
	// leads its own session, so such a group gets no session row above it:
	// "session N · 1 group" would double the list and say nothing.
	solo bool
	// escapee marks a process row of a process that left its group.
	escapee bool
}

// key identifies a row across snapshots, so the cursor stays put.
func (r row) key() string {
	switch r.kind {
	case rowSession:
		return "s" + strconv.Itoa(r.sid)
	case rowGroup:
		return "g" + strconv.Itoa(r.group.PGID)
	}
	return "p" + strconv.Itoa(r.proc.PID)
}

// treeState is the group tree: the rows it shows, folding and filtering.
type treeState struct {
	groups []sandbox.Group
	rows   []row
	cursor int
	offset int
	filter string
	// filterErr is why the filter matches nothing (a bad regex).
	filterErr error
	order     sortOrder
	folded    map[int]bool // sessions folded shut
	expanded  map[int]bool // groups opened to show their processes
	// lost is the row the cursor was on when a snapshot left it out (a
	// group between its leader's exit and its published end, which may
	// come a poll later): the cursor goes back to it when it returns,
	// unless the operator moved the cursor meanwhile. Without it the
	// cursor would settle on a neighbour, and the pane with it.
	lost string
}

func newTreeState() treeState {
	return treeState{folded: map[int]bool{}, expanded: map[int]bool{}}
}

// setGroups replaces the data and rebuilds the rows, keeping the cursor on
// the same row when it still exists.
func (t *treeState) setGroups(groups []sandbox.Group) {
	t.groups = groups
	t.rebuild()
}

func (t *treeState) rebuild() {
	keep := t.lost
	if r, ok := t.selected(); ok && keep == "" {
		keep = r.key()
	}
	f := compileFilter(t.filter)
	t.filterErr = f.err
	t.rows = buildRows(t.groups, t.filter, f, t.order, t.folded, t.expanded)
	t.cursor = min(t.cursor, max(0, len(t.rows)-1))
	t.lost = keep
	for i, r := range t.rows {
		if r.key() == keep {
			t.cursor, t.lost = i, ""
			break
		}
	}
}

// setCursor puts the cursor on row i at the operator's asking: a row lost
// to a snapshot is no longer wanted back.
func (t *treeState) setCursor(i int) {
	t.cursor, t.lost = i, ""
}

func (t *treeState) selected() (row, bool) {
	if t.cursor < 0 || t.cursor >= len(t.rows) {
		return row{}, false
	}
	return t.rows[t.cursor], true
}

// selectedGroup is the group under the cursor, or the group of the process
// under it.
func (t *treeState) selectedGroup() *sandbox.Group {
	r, ok := t.selected()
	if !ok || r.kind == rowSession {
		return nil
	}
	return r.group
}

func (t *treeState) move(delta int) {
	t.setCursor(max(0, min(len(t.rows)-1, t.cursor+delta)))
}

// scrollInto keeps the cursor visible in a window of h rows.
func (t *treeState) scrollInto(h int) {
	if h <= 0 {
		return
	}
	if t.cursor < t.offset {
		t.offset = t.cursor
	}
	if t.cursor >= t.offset+h {
		t.offset = t.cursor - h + 1
	}
	t.offset = max(0, min(t.offset, max(0, len(t.rows)-h)))
}

// buildRows groups by session, applying the filter to groups (a session
// shows when any of its groups matches). A session gets a row only when it
// holds more than one group; a lone group stands at the top level. Groups are in the sort order
// within their session; sessions are by sid, or, sorted by anything else,
// in the order of their first group (the session of the busiest group
// first).
func buildRows(groups []sandbox.Group, filter string, f groupFilter, order sortOrder, folded, expanded map[int]bool) []row {
	var all []*sandbox.Group
	for i := range groups {
		g := &groups[i]
		if filter == "" || f.matches(g) {
			all = append(all, g)
		}
	}
	order.sortGroups(all)
	bySID := map[int][]*sandbox.Group{}
	var sids []int
	for _, g := range all {
		if _, ok := bySID[g.SID]; !ok {
			sids = append(sids, g.SID)
		}
		bySID[g.SID] = append(bySID[g.SID], g)
	}
	if order == (sortOrder{}) {
		sort.Ints(sids)
	}
	rows := make([]row, 0, len(groups)+len(sids))
	for _, sid := range sids {
		gs := bySID[sid]
		solo := len(gs) == 1
		if !solo {
			rows = append(rows, row{kind: rowSession, sid: sid, groups: len(gs)})
			if folded[sid] {
				continue
			}
		}
		for i, g := range gs {
			rows = append(rows, row{kind: rowGroup, sid: sid, group: g, last: i == len(gs)-1, solo: solo})
			if !expanded[g.PGID] {
				continue
			}
			// Members, then the escapees, which left the group and still
			// keep it live (a teardown ends them with it).
			n := len(g.Members) + len(g.Escapees)
			for j := range g.Members {
				rows = append(rows, row{kind: rowProcess, sid: sid, group: g, proc: &g.Members[j], last: j == n-1})
			}
			for j := range g.Escapees {
				rows = append(rows, row{kind: rowProcess, sid: sid, group: g, proc: &g.Escapees[j], escapee: true, last: len(g.Members)+j == n-1})
			}
		}
	}
	return rows
}
