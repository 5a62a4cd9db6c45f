package uisource

import (
	"context"
	"sort"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/backend"
	"sandtop/groupstate"
	"sandtop/ui"
)

// Finished groups come from the state the wrapper publishes under the
// runtime root (and under an agent's root), not from the process table,
// which forgets a group the moment it empties. An operator looking for
// "the job that failed" finds it here, dimmed, with its exit status.

const (
	// maxFinished bounds how many finished groups the table shows.
	maxFinished = 50
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
	backend.GroupInfo
	agent bool
	seen  time.Time // when first seen exited: orders the most recent first
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
}

func newPublishedState() *publishedState {
	return &publishedState{groups: map[string]*publishedGroup{}, agent: map[string]*publishedGroup{}, argv: map[string]rememberedArgv{}, kick: make(chan struct{}, 1)}
}

// noteLive compares the live table with the last one and, when a group
// appeared, left or lost its leader, brings the next scan forward. Called
// with p.mu held.
func (p *publishedState) noteLive(groups []ui.Group) {
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

// leaderRuns says whether g's leader is a live member.
func leaderRuns(g *ui.Group) bool {
	for _, m := range g.Members {
		if m.PID == g.PGID {
			return groupstate.ProcLive(m.State)
		}
	}
	return false
}

// refresh rescans what is due. A failed scan keeps the previous result
// and is retried later: the table is not the place to report it, and an
// absent agent root is not an error at all.
func (s *backendSource) refreshPublished(ctx context.Context) {
	p := s.pub
	now := time.Now()
	p.mu.Lock()
	ownDue, agentDue := !now.Before(p.nextOwn), !now.Before(p.nextAgent)
	p.mu.Unlock()
	if ownDue {
		start := time.Now()
		infos, err := s.listPublished(ctx)
		p.mu.Lock()
		p.lastOwn, p.ownTook = start, time.Since(start)
		p.nextOwn = time.Now().Add(max(scanEvery, 3*p.ownTook))
		if err == nil {
			p.groups = mergePublished(p.groups, infos, false, now)
		}
		p.mu.Unlock()
	}
	if agentDue {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, scanTimeout)
		// The seam finds agents' groups from the process table; the
		// working directory's agent root is read as well.
		infos, err := s.rt.AgentGroups(actx, s.opts.Cwd)
		cancel()
		p.mu.Lock()
		p.lastAgent, p.agentTook = start, time.Since(start)
		p.nextAgent = time.Now().Add(max(agentScanEvery, 3*p.agentTook))
		if err == nil {
			p.agent = mergePublished(p.agent, infos, true, now)
		}
		p.mu.Unlock()
	}
}

// listPublished reads sandtop's own state dirs: through the seam's
// ListGroups where files are cheap to read (the extension), and on stock
// envd through the agent scanner pointed at our root, which reads the same
// layout in one command instead of several per state dir.
func (s *backendSource) listPublished(ctx context.Context) ([]backend.GroupInfo, error) {
	ctx, cancel := context.WithTimeout(ctx, scanTimeout)
	defer cancel()
	if !s.compat {
		return s.rt.ListGroups(ctx)
	}
	root := s.rt.RuntimeRoot()
	if root == "" {
		return nil, nil
	}
	d, err := backend.DiscoverDsh(ctx, s.c.Process, root)
	if err != nil {
		return nil, err
	}
	infos := make([]backend.GroupInfo, len(d.Groups))
	for i, g := range d.Groups {
		infos[i] = g.GroupInfo
	}
	return infos, nil
}

// mergePublished replaces a scan's result, keeping when each group was first seen
// exited.
func mergePublished(old map[string]*publishedGroup, infos []backend.GroupInfo, agent bool, now time.Time) map[string]*publishedGroup {
	out := make(map[string]*publishedGroup, len(infos))
	for _, info := range infos {
		pg := &publishedGroup{GroupInfo: info, agent: agent}
		if prev, ok := old[info.StateDir]; ok && !prev.seen.IsZero() {
			pg.seen = prev.seen
		} else if info.ExitCode != nil || info.State == backend.GroupSettled {
			pg.seen = now
		}
		out[info.StateDir] = pg
	}
	return out
}

// addPublished gives live groups their published exit status and state
// dir (it completes stateDirs for groups whose wrapper leader has exited),
// remembers their argv, and appends the most recent finished groups
// (settled, dimmed) that the live table no longer has. It returns the
// agent's pgids for the origin rule.
func (p *publishedState) addPublished(groups []ui.Group, stateDirs map[int]string) ([]ui.Group, map[int]bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	all := make([]*publishedGroup, 0, len(p.groups)+len(p.agent))
	for _, m := range []map[string]*publishedGroup{p.groups, p.agent} {
		for _, pg := range m {
			if pg.Pgid > 1 {
				all = append(all, pg)
			}
		}
	}
	byPgid := map[int]*publishedGroup{}
	agentPgids := map[int]bool{}
	for _, pg := range all {
		if prev := byPgid[pg.Pgid]; prev == nil || prev.State == backend.GroupSettled {
			byPgid[pg.Pgid] = pg // a live claim on a pgid beats a settled one
		}
		if pg.agent && pg.State != backend.GroupSettled {
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
		if pg == nil || pg.State == backend.GroupSettled || (stateDirs[g.PGID] != "" && stateDirs[g.PGID] != pg.StateDir) {
			continue
		}
		g.Exit = exitOf(pg.GroupInfo)
		if stateDirs[g.PGID] == "" {
			// The wrapper leader has exited and descendants live on: the
			// published state still says whose group it is.
			stateDirs[g.PGID] = pg.StateDir
			if len(g.Argv) == 0 {
				g.Argv = p.argv[pg.StateDir].argv
			}
		}
	}
	// Finished: published with a pgid that the live table lacks (a group
	// whose pgid was reused by a live one is not shown twice).
	var done []*publishedGroup
	for _, pg := range all {
		if !live[pg.Pgid] && (pg.State == backend.GroupSettled || pg.State == backend.GroupLeaderExited) {
			done = append(done, pg)
		}
	}
	sort.Slice(done, func(i, j int) bool {
		if !done[i].seen.Equal(done[j].seen) {
			return done[i].seen.After(done[j].seen)
		}
		return done[i].Pgid > done[j].Pgid // pids mostly grow: newer first
	})
	if len(done) > maxFinished {
		done = done[:maxFinished]
	}
	keep := map[string]bool{}
	for _, dir := range stateDirs {
		keep[dir] = true
	}
	for _, pg := range all {
		keep[pg.StateDir] = true
	}
	for _, pg := range done {
		g := ui.Group{PGID: pg.Pgid, SID: pg.Pgid, Settled: true, Exit: exitOf(pg.GroupInfo), Argv: pg.Argv, Origin: ui.OriginSandtop}
		if len(g.Argv) == 0 { // kept by an older wrapper, or an agent's
			g.Argv = p.argv[pg.StateDir].argv
		}
		if pg.agent {
			g.Origin = ui.OriginAgent
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

// exitOf is the published status of the direct command.
func exitOf(info backend.GroupInfo) *ui.ExitStatus {
	if info.ExitCode == nil {
		return nil
	}
	e := &ui.ExitStatus{Code: *info.ExitCode}
	if info.Signal != "" {
		e.Signal = int(unix.SignalNum(info.Signal))
	}
	return e
}
