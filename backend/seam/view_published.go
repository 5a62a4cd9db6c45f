package seam

import (
	"reflect"
	"slices"
	"sort"
	"sync"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

// Finished groups come from the state the wrapper publishes under the
// runtime root (and under an agent's root), not from the process table,
// which forgets a group the moment it empties. An operator looking for
// "the job that failed" finds it here, with its exit status.

const (
	// scanEvery paces the scans of published state while the live table
	// stays the same; a group appearing, leaving or losing its leader
	// brings the next scan forward, though never sooner than scanGap, nor
	// than three times the last scan's duration, after the last one. With
	// 1,000 groups a scan reads 1,000 state directories, so an idle TUI
	// must not repeat it for nothing, and a busy one (groups coming and
	// going all the time) no more often than it used to.
	scanEvery = 10 * time.Second
	scanGap   = 2 * time.Second
	// agentScanEvery paces the scans of agents' roots the same way; a root
	// that does not exist still costs a command on stock envd.
	agentScanEvery = 30 * time.Second
	scanTimeout    = 10 * time.Second
)

// rememberedArgv is a state dir's argv and when its group was last live.
type rememberedArgv struct {
	argv []string
	seen time.Time
}

// argvMemory is how long the argv of a group that left the table is kept
// for a state dir no scan has listed yet.
const argvMemory = time.Minute

// publishedGroup is one state dir as last read.
type publishedGroup struct {
	PublishedGroup
	agent bool
	seen  time.Time // when first seen exited: orders the most recent first
}

// exit is the group's published exit status; nil before there is one.
func (pg *publishedGroup) exit() *sandbox.Exit {
	if pg.ExitCode == nil {
		return nil
	}
	return &sandbox.Exit{Code: *pg.ExitCode, Signal: pg.Signal}
}

// publishedState keeps the last scans and the argv seen for each state dir
// while its group was live (the state dir does not record it).
type publishedState struct {
	mu        sync.Mutex
	groups    map[string]*publishedGroup // by state dir
	agent     map[string]*publishedGroup
	argv      map[string]rememberedArgv
	nextOwn   time.Time
	nextAgent time.Time
	// lastOwn and ownTook: when the last scan of our own state started,
	// and how long it took (see scanEvery); lastAgent and agentTook the
	// same for agents' roots.
	lastOwn, lastAgent time.Time
	ownTook, agentTook time.Duration
	// live is the live table's groups as last composed, each with whether
	// its leader still runs; a change sends on kick.
	live map[int]bool
	kick chan struct{}
	// gen counts the scans that changed what was published.
	gen uint64
}

func newPublishedState() *publishedState {
	return &publishedState{groups: map[string]*publishedGroup{}, agent: map[string]*publishedGroup{}, argv: map[string]rememberedArgv{}, kick: make(chan struct{}, 1)}
}

// noteLive compares the live table with the last one and, when a group
// appeared, left or lost its leader, brings the next scan forward. Called
// with p.mu held.
func (p *publishedState) noteLive(groups []sandbox.Group) {
	live := make(map[int]bool, len(groups))
	for i := range groups {
		live[groups[i].PGID] = leaderRuns(&groups[i])
	}
	changed := len(live) != len(p.live)
	for pgid, leader := range live {
		if prev, ok := p.live[pgid]; !ok || prev != leader {
			changed = true
			break
		}
	}
	p.live = live
	if changed {
		if soonest := p.lastOwn.Add(max(scanGap, 3*p.ownTook)); soonest.Before(p.nextOwn) {
			p.nextOwn = soonest
		}
		if soonest := p.lastAgent.Add(max(scanGap, 3*p.agentTook)); soonest.Before(p.nextAgent) {
			p.nextAgent = soonest
		}
		select {
		case p.kick <- struct{}{}:
		default:
		}
	}
}

// generation changes whenever a scan finds the published state changed.
func (p *publishedState) generation() uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.gen
}

// samePublished says whether a scan found what the last one kept.
func samePublished(old map[string]*publishedGroup, infos []PublishedGroup, agent bool) bool {
	if len(old) != len(infos) {
		return false
	}
	for i := range infos {
		pg, ok := old[infos[i].StateDir]
		if !ok || pg.agent != agent || !reflect.DeepEqual(pg.PublishedGroup, infos[i]) {
			return false
		}
	}
	return true
}

// mergePublished replaces a scan's result, keeping when each group was first seen
// exited.
func mergePublished(old map[string]*publishedGroup, infos []PublishedGroup, agent bool, now time.Time) map[string]*publishedGroup {
	out := make(map[string]*publishedGroup, len(infos))
	for _, info := range infos {
		pg := &publishedGroup{PublishedGroup: info, agent: agent}
		if prev, ok := old[info.StateDir]; ok && !prev.seen.IsZero() {
			pg.seen = prev.seen
		} else if info.ExitCode != nil || info.State == groupstate.Settled {
			pg.seen = now
		}
		out[info.StateDir] = pg
	}
	return out
}

// addPublished gives live groups their published exit status and state
// dir (it completes stateDirs for groups whose wrapper leader has exited),
// remembers their argv, and appends the finished groups that the live
// table no longer has: settled, oldest first (the limit most recent ones,
// unless limit is 0), then those never published (no pgid). It returns the agents' pgids for the origin rule.
func (p *publishedState) addPublished(groups []sandbox.Group, stateDirs map[int]string, limit int) ([]sandbox.Group, map[int]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	all := make([]*publishedGroup, 0, len(p.groups)+len(p.agent))
	var unpublished []*publishedGroup
	for _, m := range []map[string]*publishedGroup{p.groups, p.agent} {
		for _, pg := range m {
			if pg.Pgid > 1 {
				all = append(all, pg)
			} else {
				unpublished = append(unpublished, pg)
			}
		}
	}
	byPgid := map[int]*publishedGroup{}
	agentPgids := map[int]bool{}
	for _, pg := range all {
		if prev := byPgid[pg.Pgid]; prev == nil || prev.State == groupstate.Settled {
			byPgid[pg.Pgid] = pg // a live claim on a pgid beats a settled one
		}
		if pg.agent && pg.State != groupstate.Settled {
			agentPgids[pg.Pgid] = true
		}
	}
	p.noteLive(groups)
	live := map[int]bool{}
	for i := range groups {
		g := &groups[i]
		live[g.PGID] = true
		if dir := stateDirs[g.PGID]; dir != "" && len(g.Argv) > 0 {
			p.argv[dir] = rememberedArgv{argv: g.Argv, seen: now}
		}
		pg := byPgid[g.PGID]
		// A settled entry sharing a live pgid is an old group whose pgid
		// was reused: it says nothing about this one.
		if pg == nil || pg.State == groupstate.Settled || (stateDirs[g.PGID] != "" && stateDirs[g.PGID] != pg.StateDir) {
			continue
		}
		g.Exit, g.Problem = pg.exit(), pg.Problem
		g.OutputAt = pg.OutputAt
		if g.Tag == "" {
			g.Tag = pg.Tag
		}
		if g.Argv == nil {
			g.Argv = pg.Argv // exact, where the table's is not
		}
		if stateDirs[g.PGID] == "" {
			// The wrapper leader has exited and descendants live on: the
			// published state still says whose group it is.
			stateDirs[g.PGID] = pg.StateDir
			if len(g.Argv) == 0 {
				g.Argv = pg.Argv
			}
			if len(g.Argv) == 0 {
				g.Argv = p.argv[pg.StateDir].argv
			}
		}
	}
	// Finished: published with a pgid that the live table lacks (a group
	// whose pgid was reused by a live one is not shown twice). One the last
	// scan found running has since left the table: it is settled, and the
	// next scan (brought forward by its leaving) reads how it ended. Left
	// out until then, it would vanish from every listing for a scan's gap,
	// and a TUI's cursor with it.
	var done []*publishedGroup
	for _, pg := range all {
		if !live[pg.Pgid] && (pg.State == groupstate.Settled || pg.State == groupstate.LeaderExited || pg.State == groupstate.Running) {
			done = append(done, pg)
		}
	}
	newestFirst := func(a, b *publishedGroup) bool {
		switch {
		case !a.seen.Equal(b.seen):
			return a.seen.After(b.seen)
		case !a.Changed.Equal(b.Changed):
			return a.Changed.After(b.Changed)
		}
		return a.Pgid > b.Pgid // pids mostly grow: newer first
	}
	sort.Slice(done, func(i, j int) bool { return newestFirst(done[i], done[j]) })
	if limit > 0 && len(done) > limit {
		done = done[:limit]
	}
	slices.Reverse(done) // listed oldest first, like the state dirs
	sort.Slice(unpublished, func(i, j int) bool { return newestFirst(unpublished[j], unpublished[i]) })
	keep := map[string]bool{}
	for _, dir := range stateDirs {
		keep[dir] = true
	}
	for _, pg := range all {
		keep[pg.StateDir] = true
	}
	for _, pg := range append(done, unpublished...) {
		g := sandbox.Group{PGID: pg.Pgid, SID: pg.Pgid, ID: pg.ID, StateDir: pg.StateDir, Origin: sandbox.OriginSandtop, Tag: pg.Tag,
			Argv: pg.Argv, State: groupstate.Settled, Exit: pg.exit(), Problem: pg.Problem}
		if pg.State == groupstate.Unpublished {
			g.State, g.SID = groupstate.Unpublished, 0
		}
		if len(g.Argv) == 0 { // kept by an older wrapper, or an agent's
			g.Argv = p.argv[pg.StateDir].argv
		}
		if pg.agent {
			g.Origin = sandbox.OriginAgent
		}
		groups = append(groups, g)
	}
	// Remember only dirs that still exist; one seen live lately may just
	// not be in a scan yet.
	for dir, r := range p.argv {
		if !keep[dir] && now.Sub(r.seen) > argvMemory {
			delete(p.argv, dir)
		}
	}
	return groups, agentPgids
}
