package daemon

import (
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"sandtop/backend/shim"
)

// reaper makes this OS process a child subreaper, so orphaned grandchildren
// of managed processes are reparented to it instead of to PID 1, and reaps
// those orphans on SIGCHLD. It never waits for a pid os/exec is waiting
// for: it looks only at zombie children it can see in /proc and skips
// managed leaders, so os/exec always gets its child's status.
//
// It is process-wide (one per OS process) because SIGCHLD and the subreaper
// flag are; every Daemon in the process registers with it.
type reaper struct {
	// startMu is held while a managed child is forked and registered, and
	// while a scan decides what to reap, so a just-forked child that exits
	// at once is never mistaken for an orphan.
	startMu sync.Mutex

	once    sync.Once
	mu      sync.Mutex
	daemons map[*Daemon]struct{}
}

var theReaper = &reaper{daemons: map[*Daemon]struct{}{}}

func (r *reaper) register(d *Daemon) {
	r.once.Do(r.run)
	r.mu.Lock()
	r.daemons[d] = struct{}{}
	r.mu.Unlock()
	r.scan() // orphans may already be waiting
}

func (r *reaper) run() {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return // without it orphans go to PID 1, which reaps them
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGCHLD)
	go func() {
		for range ch {
			r.scan()
		}
	}()
}

// unregister stops d's say in what is reaped: a daemon that has shut down
// (a test binary runs many) must not keep reaping, with ReapAllOrphans,
// children that others in the process wait for.
func (r *reaper) unregister(d *Daemon) {
	r.mu.Lock()
	delete(r.daemons, d)
	r.mu.Unlock()
}

// starting runs fn (fork and register a managed child) so no scan runs
// in between.
func (r *reaper) starting(fn func() error) error {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	return fn()
}

// scan reaps every zombie child the registered daemons let it reap.
func (r *reaper) scan() {
	r.startMu.Lock()
	defer r.startMu.Unlock()
	for _, pid := range childPids() {
		// A shim or a leader os/exec waits for is never reaped here, so
		// its stat is not read: with a thousand groups, most children are
		// shims, and every SIGCHLD (one per group that ends) would read
		// them all.
		if r.leftToWaiter(pid) {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.state != "Z" {
			continue
		}
		if !r.mayReap(pid, st.pgid, st.sid) {
			continue
		}
		var ws unix.WaitStatus
		if got, err := unix.Wait4(pid, &ws, unix.WNOHANG, nil); err == nil && got == pid {
			r.reaped(pid, ws)
		}
	}
}

// reaped publishes the exit of a shimless group's leader, which its shim
// can no longer publish, when this process was the one to reap it.
func (r *reaper) reaped(pid int, ws unix.WaitStatus) {
	r.mu.Lock()
	var found []*shimLink
	var by []*Daemon
	for d := range r.daemons {
		if l := d.reg.shimlessByPgid(pid); l != nil {
			found, by = append(found, l), append(by, d)
		}
	}
	r.mu.Unlock()
	for i, l := range found {
		by[i].publishShimlessExit(l, ws)
	}
}

// leftToWaiter says whether pid is a child something else waits for: a
// leader os/exec still waits for, or a shim.
func (r *reaper) leftToWaiter(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for d := range r.daemons {
		if p := d.reg.byPid(uint32(pid)); p != nil && p.cmd != nil && !p.leaderReaped() {
			return true
		}
		if d.reg.isShimChild(pid) {
			return true
		}
	}
	return false
}

// mayReap: never a leader os/exec still waits for; always an orphan when a
// daemon owns the OS process (ReapAllOrphans); otherwise only orphans whose
// group or session a daemon started.
func (r *reaper) mayReap(pid, pgid, sid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	all, adopted := false, false
	for d := range r.daemons {
		if p := d.reg.byPid(uint32(pid)); p != nil && p.cmd != nil && !p.leaderReaped() {
			return false
		}
		if d.reg.isShimChild(pid) {
			return false
		}
		all = all || d.cfg.ReapAllOrphans
		adopted = adopted || d.reg.startedGroup(pgid) || d.reg.startedGroup(sid) || d.reg.shimlessByPgid(pgid) != nil
	}
	return all || adopted
}

// leaderReaped reports whether os/exec has collected the leader.
func (p *proc) leaderReaped() bool {
	select {
	case <-p.leaderExited:
		return true
	default:
		return false
	}
}

// startedGroup reports whether id is the pid (and so the pgid or sid) of a
// live or retained process the daemon started.
func (r *registry) startedGroup(id int) bool {
	if id <= 1 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[uint32(id)] != nil || r.exited[uint32(id)] != nil
}

// childPids lists this process's children from its threads' children
// files (children are per thread, and Go forks from many threads). It
// reads the task directory once and each thread's children file, where a
// glob of task/*/children also listed every thread's directory (about 50
// entries each, all of them looked up): with 1,000 shims, and a scan at
// every SIGCHLD, that listing was most of the reaper's cost.
func childPids() []int {
	kids, _ := shim.ChildrenOf(os.Getpid())
	return kids
}
