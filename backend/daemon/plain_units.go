package daemon

import (
	"sync"
	"syscall"
)

// A plain Start, like envd's, gives its process no group of its own: the
// process, and whatever it forks, stay in the daemon's process group,
// which the daemon never lists or signals as a group. So that an operator
// still sees (and can end) what an SDK client started, the daemon lists
// each such process with its descendants in that group as a unit: a
// listed group whose pgid field is the pid of the unit's root, the
// daemon's child that started it. A unit is signalled member by member,
// never through kill(-pgid). Membership is sticky: when the root exits
// and its children are reparented to the daemon, they stay in its unit,
// so a teardown of the unit sees them and does not call it empty.
type plainUnits struct {
	mu    sync.Mutex
	of    map[int]unitMark // pid → its unit, from the last read
	roots map[int]bool
}

// unitMark places a process in a unit. Both start times guard against pid
// reuse: a mark holds only for the same process, and only while the
// root's pid has not gone to another process.
type unitMark struct {
	root             int
	start, rootStart uint64
}

// read assigns every process of the daemon's group that descends from the
// daemon to a unit and returns each unit's members by root. skip leaves
// out processes that are not work (shims, the spare); mayRoot says which
// of the daemon's children may root a unit.
func (u *plainUnits) read(self selfInfo, t procTable, skip, mayRoot func(pid int) bool) map[int][]procStat {
	u.mu.Lock()
	defer u.mu.Unlock()
	next := make(map[int]unitMark, len(u.of))
	var place func(pid, depth int) (unitMark, bool)
	place = func(pid, depth int) (unitMark, bool) {
		if m, ok := next[pid]; ok {
			return m, m.root != 0
		}
		st, ok := t.stats[pid]
		if !ok || depth > 1024 {
			return unitMark{}, false
		}
		if m, ok := u.of[pid]; ok && m.root != 0 && m.start == st.startTicks {
			if rs, alive := t.stats[m.root]; !alive || rs.startTicks == m.rootStart {
				next[pid] = m
				return m, true
			}
		}
		m := unitMark{start: st.startTicks}
		switch {
		case st.ppid == self.pid:
			if mayRoot(pid) {
				m.root, m.rootStart = pid, st.startTicks
			}
		case st.ppid > 1:
			if pm, ok := place(st.ppid, depth+1); ok {
				m.root, m.rootStart = pm.root, pm.rootStart
			}
		}
		next[pid] = m
		return m, m.root != 0
	}
	units := map[int][]procStat{}
	for pid, st := range t.stats {
		if st.pgid != self.pgid || pid == self.pid || skip(pid) {
			continue
		}
		if m, ok := place(pid, 0); ok {
			units[m.root] = append(units[m.root], st)
		}
	}
	u.of = next
	u.roots = make(map[int]bool, len(units))
	for root := range units {
		u.roots[root] = true
	}
	return units
}

// forgetExcept drops the marks of processes not in alive, and the roots
// no mark left names.
func (u *plainUnits) forgetExcept(alive map[int]bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.of = keepOnly(u.of, alive)
	roots := make(map[int]bool)
	for _, m := range u.of {
		if u.roots[m.root] {
			roots[m.root] = true
		}
	}
	u.roots = roots
}

// wasRoot says whether the last read listed a unit with this root.
func (u *plainUnits) wasRoot(pid int) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.roots[pid]
}

// maybeUnit says whether pgid may name a unit rather than a group: the
// last read listed it, or it is a live plain start of this daemon (which
// sits in the daemon's group).
func (d *Daemon) maybeUnit(pgid int) bool {
	if d.units.wasRoot(pgid) {
		return true
	}
	p := d.reg.byPid(uint32(pgid))
	return p != nil && p.shim == nil && !p.isPTY() && !p.exited()
}

// unitsOf reads the units from a process table.
func (d *Daemon) unitsOf(t procTable) map[int][]procStat {
	return d.readUnits(t, d.readShimTree(t.stats, t.children))
}

func (d *Daemon) readUnits(t procTable, tree shimTree) map[int][]procStat {
	return d.units.read(d.self, t, func(pid int) bool { return tree.isShim[pid] || d.reg.isShimChild(pid) }, d.mayRootUnit)
}

// mayRootUnit says whether a child of the daemon in its group is work: any
// child when the daemon owns its OS process (a plain Start's orphans, such
// as a server an SDK's "cmd &" left, are reparented to it), and only its
// own plain Starts when it is embedded in another program, whose other
// children are none of its business.
func (d *Daemon) mayRootUnit(pid int) bool {
	if d.cfg.ReapAllOrphans {
		return true
	}
	p := d.reg.byPid(uint32(pid))
	return p != nil && p.shim == nil
}

// signalUnit sends sig to every live member of the unit rooted at root;
// ok is false when root names no unit. It reports whether any member got
// it.
func (d *Daemon) signalUnit(root int, sig syscall.Signal) (delivered, ok bool) {
	members, ok := d.unitsOf(readProcTable())[root]
	if !ok {
		return false, false
	}
	for _, st := range members {
		if st.pid > 1 && st.pid != d.self.pid && syscall.Kill(st.pid, sig) == nil {
			delivered = true
		}
	}
	return delivered, true
}
