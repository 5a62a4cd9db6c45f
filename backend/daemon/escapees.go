package daemon

import (
	"sort"
	"syscall"
	"time"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/groupstate"
)

// shimTree is what /proc shows of the shims' trees: each live shim's
// escapees (its descendants, and members of its session, outside its
// group), and every shim pid (never listed: a shim is bookkeeping, not
// work).
type shimTree struct {
	escapees map[int][]procStat // by group pgid
	isShim   map[int]bool
	escapee  map[int]bool // pid → is an escapee of some group
}

// readShimTree classifies stats against the live shims.
func (d *Daemon) readShimTree(stats map[int]procStat, children map[int][]int) shimTree {
	t := shimTree{escapees: map[int][]procStat{}, isShim: map[int]bool{}, escapee: map[int]bool{}}
	links := d.reg.liveShims()
	for _, l := range links {
		t.isShim[l.pid] = true
	}
	// By session, once: looking through every process for each shim cost
	// shims × processes per snapshot.
	bySid := map[int][]procStat{}
	for _, st := range stats {
		if t.isShim[st.sid] {
			bySid[st.sid] = append(bySid[st.sid], st)
		}
	}
	for _, l := range links {
		seen := map[int]bool{}
		add := func(st procStat) {
			if seen[st.pid] || st.pgid == l.pgid || t.isShim[st.pid] || !groupstate.ProcLive(st.state) {
				return
			}
			seen[st.pid] = true
			t.escapee[st.pid] = true
			t.escapees[l.pgid] = append(t.escapees[l.pgid], st)
		}
		var walk func(int)
		walk = func(pid int) {
			for _, c := range children[pid] {
				add(stats[c])
				walk(c)
			}
		}
		walk(l.pid)
		for _, st := range bySid[l.pid] {
			add(st)
		}
	}
	return t
}

// groupEscapees lists the live escapees of group pgid now.
func (d *Daemon) groupEscapees(pgid int) []procStat {
	l := d.reg.shimByPgid(pgid)
	if l == nil {
		return nil
	}
	// From the shim's subtree, where every escapee is (see
	// snapshotShimGroup); all of /proc only without the children files.
	if procs, ok := subtree(l.pid); ok {
		var out []procStat
		for _, st := range procs {
			if st.pgid != pgid && !d.reg.isShim(st.pid) && groupstate.ProcLive(st.state) {
				out = append(out, st)
			}
		}
		return out
	}
	t := readProcTable()
	return d.readShimTree(t.stats, t.children).escapees[pgid]
}

// signalEscapees sends sig to every escapee of group pgid and returns them.
// With SIGKILL it looks again until no new escapee shows up, so one that
// forked in between is not missed.
func (d *Daemon) signalEscapees(pgid int, sig syscall.Signal) []*sandtopv1.ProcInfo {
	now := time.Now()
	signalled := map[int]bool{}
	var out []*sandtopv1.ProcInfo
	for round := 0; round < 50; round++ {
		fresh := 0
		for _, st := range d.groupEscapees(pgid) {
			if signalled[st.pid] || st.pid <= 1 || st.pid == d.self.pid {
				continue
			}
			signalled[st.pid] = true
			fresh++
			out = append(out, d.procInfo(st, now))
			_ = syscall.Kill(st.pid, sig)
		}
		if fresh == 0 || sig != syscall.SIGKILL {
			break
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out
}

// killAllEscapees ends the escapees of every live shim (daemon stop).
func (d *Daemon) killAllEscapees() {
	for _, l := range d.reg.liveShims() {
		d.signalEscapees(l.pgid, syscall.SIGKILL)
	}
}
