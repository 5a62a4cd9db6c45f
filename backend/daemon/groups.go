package daemon

import (
	"hash/fnv"
	"os"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/groupstate"
	"sandtop/wrapper"
)

var pageSize = int64(os.Getpagesize())

// procTable is one read of /proc: every process's stat, and who is whose
// child.
type procTable struct {
	stats    map[int]procStat
	children map[int][]int
}

func readProcTable() procTable {
	t := procTable{stats: map[int]procStat{}, children: map[int][]int{}}
	for _, pid := range allPids() {
		st, err := readStat(pid)
		if err != nil {
			continue
		}
		t.stats[pid] = st
		t.children[st.ppid] = append(t.children[st.ppid], pid)
	}
	return t
}

// noProcessIn says whether process group pgid has no process at all,
// zombies included: the kernel finds no one to check a null signal
// against. No signal is sent, and never to a pgid of 1 or less (which
// kill(2) reads as every process, or its caller's group).
func noProcessIn(pgid int) bool {
	return pgid > 1 && syscall.Kill(-pgid, 0) == syscall.ESRCH
}

// startedProcs indexes the processes the daemon started by pid.
func (d *Daemon) startedProcs() map[int]*proc {
	started := map[int]*proc{}
	for _, p := range d.reg.liveProcs() {
		started[int(p.pid)] = p
	}
	return started
}

// sandboxGroups is the set of process groups the daemon is responsible for,
// and so the only ones it lists and signals: the groups of its descendants
// (orphans reparented to it included, since it is their subreaper) and of
// any process sharing a group or session with a process it started (a
// terminal's job groups). The daemon's own group is left out: it holds the
// daemon, and the daemon never signals it.
func (d *Daemon) sandboxGroups(t procTable, started map[int]*proc) map[int]bool {
	wanted := map[int]bool{} // pgids
	var walk func(int)
	walk = func(pid int) {
		for _, c := range t.children[pid] {
			wanted[t.stats[c].pgid] = true
			walk(c)
		}
	}
	walk(d.self.pid)
	// A shimless group is the sandbox's, with the job groups of its
	// session, though it may descend from no one the daemon knows.
	shimless := map[int]bool{}
	for _, l := range d.reg.shimlessGroups() {
		shimless[l.pgid] = true
	}
	for _, st := range t.stats {
		if started[st.pgid] != nil || started[st.sid] != nil || shimless[st.sid] {
			wanted[st.pgid] = true
		}
	}
	// A re-adopted group is no descendant of this daemon, but its shim is
	// known.
	for _, l := range d.reg.liveShims() {
		wanted[l.pgid] = true
	}
	delete(wanted, d.self.pgid)
	delete(wanted, 0)
	return wanted
}

// groupHeader is a listed group without its processes: who started it,
// its tag and, for a shim's group, its state directory and argv.
func groupHeader(pgid, sid int, p *proc, l *shimLink) *sandtopv1.Group {
	g := &sandtopv1.Group{Pgid: uint32(pgid), Sid: uint32(sid)}
	if p != nil {
		g.StartedPid, g.Tag, g.Pty = p.pid, p.tag, p.isPTY()
	} else if l != nil {
		g.StartedPid, g.Tag = uint32(l.pgid), l.tag
	}
	if l != nil {
		g.Origin, g.StateDir, g.Argv = originSandtop, l.dir, l.argv
	}
	return g
}

// snapshotGroups reads /proc and returns the sandbox's process groups
// (sandboxGroups), with their members.
func (d *Daemon) snapshotGroups(pgidFilter, sidFilter uint32) []*sandtopv1.Group {
	now := time.Now()
	if pgidFilter != 0 && sidFilter == 0 {
		l := d.reg.shimByPgid(int(pgidFilter))
		if l != nil {
			if g, ok := d.snapshotShimGroup(l, now); ok {
				if g == nil {
					return nil
				}
				return []*sandtopv1.Group{g}
			}
		} else if noProcessIn(int(pgidFilter)) && !d.maybeUnit(int(pgidFilter)) {
			// Without a live shim a group has no escapees, and with no
			// process in it (not even a zombie) it has no members: the
			// whole read below would find nothing. A group whose shim has
			// just ended is asked about this way at the end of every
			// teardown, and reading all of /proc then cost as much as the
			// rest of the teardown.
			return nil
		}
	}
	return d.groupsFrom(readProcTable(), pgidFilter, sidFilter, now)
}

// groupsFrom is snapshotGroups from a process table already read.
func (d *Daemon) groupsFrom(t procTable, pgidFilter, sidFilter uint32, now time.Time) []*sandtopv1.Group {
	stats := t.stats
	started := d.startedProcs()
	wanted := d.sandboxGroups(t, started)
	tree := d.readShimTree(stats, t.children)
	shims := map[int]*shimLink{} // by group pgid
	for _, l := range d.reg.liveShims() {
		shims[l.pgid] = l
	}
	for _, l := range d.reg.shimlessGroups() {
		shims[l.pgid] = l // for its state directory and argv
	}

	byPgid := map[int]*sandtopv1.Group{}
	seen := make(map[int]bool, len(stats))
	group := func(pgid, sid int) *sandtopv1.Group {
		g := byPgid[pgid]
		if g == nil {
			g = groupHeader(pgid, sid, started[pgid], shims[pgid])
			byPgid[pgid] = g
		}
		return g
	}
	for pid, st := range stats {
		// Shims are not listed: a group's is the group's supervisor, and the
		// spare (started ahead, with no group yet) is no one's work.
		if !wanted[st.pgid] || pid == d.self.pid || tree.isShim[pid] || tree.escapee[pid] || d.reg.isShimChild(pid) {
			continue
		}
		if pgidFilter != 0 && uint32(st.pgid) != pgidFilter || sidFilter != 0 && uint32(st.sid) != sidFilter {
			continue
		}
		seen[pid] = true
		g := group(st.pgid, st.sid)
		g.Members = append(g.Members, d.procInfo(st, now))
	}
	// A group whose members are gone still has work while escapees live.
	for pgid, esc := range tree.escapees {
		if pgidFilter != 0 && uint32(pgid) != pgidFilter || sidFilter != 0 {
			continue
		}
		sid := 0
		if l := d.reg.shimByPgid(pgid); l != nil {
			sid = l.pid
		}
		g := group(pgid, sid)
		for _, st := range esc {
			seen[st.pid] = true
			g.Escapees = append(g.Escapees, d.procInfo(st, now))
		}
		sort.Slice(g.Escapees, func(i, j int) bool { return g.Escapees[i].Pid < g.Escapees[j].Pid })
	}
	// What plain Starts run sits in the daemon's own group: listed as
	// units (see plainUnits).
	for root, members := range d.readUnits(t, tree) {
		if pgidFilter != 0 && uint32(root) != pgidFilter || sidFilter != 0 && uint32(members[0].sid) != sidFilter {
			continue
		}
		g := group(root, members[0].sid)
		for _, st := range members {
			seen[st.pid] = true
			g.Members = append(g.Members, d.procInfo(st, now))
		}
		// An agent's wrapper says whose it is even before it leaves the
		// daemon's group; anything else a plain Start runs is envd's.
		markOrigin(g, nil)
		if g.Origin == "" {
			g.Origin = originEnvd
		}
	}
	if pgidFilter == 0 && sidFilter == 0 {
		d.cpu.forgetExcept(seen)
		d.idents.forgetExcept(seen)
	}

	groups := make([]*sandtopv1.Group, 0, len(byPgid))
	for _, g := range byPgid {
		sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].Pid < g.Members[j].Pid })
		if g.Origin == "" {
			markOrigin(g, started[int(g.Pgid)])
		}
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool { return groups[i].Pgid < groups[j].Pgid })
	return groups
}

// markOrigin says who started g, from its Start (a session-dir start) or
// its leader's argv: sandtop's wrapper, or an agent provider's wrapper,
// which names its state directory (no configuration needed to find it).
func markOrigin(g *sandtopv1.Group, started *proc) {
	if started != nil && started.shim != nil {
		g.Origin, g.StateDir = originSandtop, started.shim.dir
		return
	}
	for _, m := range g.Members {
		if m.Pid != g.Pgid {
			continue
		}
		if dir, ok := wrapper.AgentStateDir(m.Argv); ok {
			g.Origin, g.StateDir = originAgent, dir
		} else if dir, ok := wrapper.SandtopStateDir(m.Argv); ok {
			g.Origin, g.StateDir = originSandtop, dir
		}
	}
}

// Values of Group.origin.
const (
	originSandtop = "sandtop"
	originAgent   = "agent"
	originEnvd    = "envd"
)

func (d *Daemon) procInfo(st procStat, now time.Time) *sandtopv1.ProcInfo {
	id := d.idents.get(st, now)
	return &sandtopv1.ProcInfo{
		Pid:             uint32(st.pid),
		Ppid:            uint32(st.ppid),
		Pgid:            uint32(st.pgid),
		Sid:             uint32(st.sid),
		Tpgid:           int32(st.tpgid),
		State:           st.state,
		Uid:             id.uid,
		StartTimeUnixMs: startTime(st).UnixMilli(),
		CpuPercent:      d.cpu.percent(st, now),
		CpuTimeMs:       st.cpuTicks * 1000 / clockTicks,
		RssBytes:        uint64(max(st.rssPages, 0) * pageSize),
		Argv:            id.argv,
		Tty:             ttyName(st.ttyNr),
		Comm:            st.comm,
	}
}

// groupsFingerprint changes when anything but cpu_percent changes.
func groupsFingerprint(groups []*sandtopv1.Group) uint64 {
	h := fnv.New64a()
	var b []byte
	num := func(n int64) { b = append(strconv.AppendInt(b, n, 10), ',') }
	str := func(s string) { b = append(append(strconv.AppendInt(b, int64(len(s)), 10), ':'), s...) }
	for _, g := range groups {
		b = append(b[:0], 'g')
		num(int64(g.Pgid))
		num(int64(g.Sid))
		num(int64(g.StartedPid))
		b = strconv.AppendBool(b, g.Pty)
		str(g.Origin)
		str(g.StateDir)
		_, _ = h.Write(b)
		for _, m := range append(g.Members, g.Escapees...) {
			b = b[:0]
			for _, n := range []int64{int64(m.Pid), int64(m.Ppid), int64(m.Pgid), int64(m.Sid), int64(m.Tpgid), int64(m.CpuTimeMs), int64(m.RssBytes)} {
				num(n)
			}
			str(m.State)
			num(int64(len(m.Argv)))
			for _, a := range m.Argv {
				str(a)
			}
			_, _ = h.Write(b)
		}
	}
	return h.Sum64()
}

// cpuSampler remembers each process's CPU time at the last snapshot, so
// cpu_percent covers the time since then (since process start the first time).
type cpuSampler struct {
	mu   sync.Mutex
	last map[int]cpuSample
}

type cpuSample struct {
	startTicks, cpuTicks uint64
	at                   time.Time
	pct                  float64
}

func newCPUSampler() *cpuSampler { return &cpuSampler{last: map[int]cpuSample{}} }

func (c *cpuSampler) percent(st procStat, now time.Time) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	prev, ok := c.last[st.pid]
	if st.stale && ok && prev.startTicks == st.startTicks {
		return prev.pct // not read this time: the rate from the last read stands
	}
	var ticks uint64
	var wall time.Duration
	if ok && prev.startTicks == st.startTicks && st.cpuTicks >= prev.cpuTicks {
		ticks, wall = st.cpuTicks-prev.cpuTicks, now.Sub(prev.at)
	} else {
		ticks, wall = st.cpuTicks, now.Sub(startTime(st))
	}
	pct := 0.0
	if wall > 0 {
		pct = float64(ticks) / clockTicks / wall.Seconds() * 100
	}
	c.last[st.pid] = cpuSample{startTicks: st.startTicks, cpuTicks: st.cpuTicks, at: now, pct: pct}
	return pct
}

// forgetExcept keeps the samples of the processes in alive, in a map
// of their size: one that held a crowd would keep its room.
func (c *cpuSampler) forgetExcept(alive map[int]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.last = keepOnly(c.last, alive)
}

// keepOnly is m with only the pids in alive, in a new map of their size
// (Go maps never shrink) when m held others.
func keepOnly[V any](m map[int]V, alive map[int]bool) map[int]V {
	n := 0
	for pid := range m {
		if alive[pid] {
			n++
		}
	}
	if n == len(m) {
		return m
	}
	kept := make(map[int]V, n)
	for pid, v := range m {
		if alive[pid] {
			kept[pid] = v
		}
	}
	return kept
}

// identityCache keeps what rarely changes about a process, its argv and its
// owner, per pid. Reading them costs two /proc lookups per member per
// snapshot, most of a watcher's cost at 1,000 groups. An entry holds while
// the process's start time and comm are the same (an exec changes comm)
// and for at most identityTTL, since a program can rewrite its argv, or
// exec one of the same name.
type identityCache struct {
	mu sync.Mutex
	m  map[int]identity
}

type identity struct {
	startTicks uint64
	comm       string
	uid        uint32
	argv       []string
	at         time.Time
}

const identityTTL = 10 * time.Second

func newIdentityCache() *identityCache { return &identityCache{m: map[int]identity{}} }

func (c *identityCache) get(st procStat, now time.Time) identity {
	c.mu.Lock()
	id, ok := c.m[st.pid]
	c.mu.Unlock()
	if ok && id.startTicks == st.startTicks && id.comm == st.comm && now.Sub(id.at) < identityTTL {
		return id
	}
	id = identity{startTicks: st.startTicks, comm: st.comm, uid: procUID(st.pid), argv: cmdline(st.pid), at: now}
	// An empty argv is not kept: a process caught inside execve already
	// has its new comm but not yet its new argv, and keeping that would
	// show it without a command for the whole TTL. (A zombie's is empty
	// too; it is read again, which is cheap.)
	if len(id.argv) > 0 {
		c.mu.Lock()
		c.m[st.pid] = id
		c.mu.Unlock()
	}
	return id
}

func (c *identityCache) forgetExcept(alive map[int]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m = keepOnly(c.m, alive)
}

// snapshotShimGroup lists one shim's group from the shim's own subtree:
// the shim leads the session and is the subreaper of everything in it, so
// every member and escapee descends from it. A teardown polls its group
// every 50 ms, and reading all of /proc for each poll of each group made
// 1,000 teardowns take minutes. ok is false when the kernel lacks the
// children files; nil when nothing of the group is left.
func (d *Daemon) snapshotShimGroup(l *shimLink, now time.Time) (*sandtopv1.Group, bool) {
	procs, ok := subtree(l.pid)
	if !ok {
		return nil, false
	}
	// The session is the members' (the program leads its own); with only
	// escapees left it is given as the full snapshot gives it.
	sid := l.pid
	for _, st := range procs {
		if st.pgid == l.pgid {
			sid = st.sid
			break
		}
	}
	// One group's look: no map of every process or shim the daemon has
	// (a teardown makes several of these, with 1,000 groups live).
	started := d.reg.liveByPid(l.pgid)
	g := groupHeader(l.pgid, sid, started, l)
	for _, st := range procs {
		switch {
		case d.reg.isShim(st.pid):
		case st.pgid == l.pgid:
			g.Members = append(g.Members, d.procInfo(st, now))
		case groupstate.ProcLive(st.state):
			g.Escapees = append(g.Escapees, d.procInfo(st, now))
		}
	}
	if len(g.Members) == 0 && len(g.Escapees) == 0 {
		return nil, true
	}
	sort.Slice(g.Members, func(i, j int) bool { return g.Members[i].Pid < g.Members[j].Pid })
	sort.Slice(g.Escapees, func(i, j int) bool { return g.Escapees[i].Pid < g.Escapees[j].Pid })
	if g.Origin == "" {
		markOrigin(g, started)
	}
	return g, true
}

// watchTable is the process table as watchers see it: a new process is read
// at once, and each known one again at least every watchSweep reads, so a
// watch tick reads a third of /proc, not all of it (with 1,000 groups a
// full read is thousands of files, every second). What a watcher shows of
// a process that changes its state or group may so lag by up to
// watchSweep ticks; ListGroups, and everything that acts, reads it whole.
type watchTable struct {
	mu    sync.Mutex
	stats map[int]procStat
	round int
}

const watchSweep = 3

// read returns the table; whole, when asked, re-reads every process.
func (w *watchTable) read(whole bool) procTable {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.round++
	pids := allPids()
	fresh := make(map[int]procStat, len(pids))
	t := procTable{stats: fresh, children: map[int][]int{}}
	for _, pid := range pids {
		st, known := w.stats[pid]
		st.stale = true
		if whole || !known || pid%watchSweep == w.round%watchSweep {
			var err error
			if st, err = readStat(pid); err != nil {
				continue
			}
		}
		fresh[pid] = st
		t.children[st.ppid] = append(t.children[st.ppid], pid)
	}
	w.stats = fresh
	return t
}

// forgetExcept drops the processes not in alive.
func (w *watchTable) forgetExcept(alive map[int]bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stats = keepOnly(w.stats, alive)
}
