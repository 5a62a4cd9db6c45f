package daemon

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// registry holds live processes by pid, and exited ones for a retention
// period so late Connect/ExitStatus calls still get their end.
type registry struct {
	retention time.Duration

	mu     sync.Mutex
	seq    uint64
	live   map[uint32]*proc
	exited map[uint32]*proc
	// expiring are the retained exits in the order they are to be
	// forgotten (each the retention after it was retired), by one timer,
	// expiry, armed while there are any.
	expiring []retainedExit
	expiry   *time.Timer
	// shims: live shim connections by shim pid; shimChildren: shims forked
	// here whose exit os/exec has not collected yet.
	shims        map[int]*shimLink
	shimGroups   map[int]*shimLink // the same links by their group's pgid
	shimChildren map[int]bool
	// shimless: groups whose shim is gone while members live, by pgid.
	shimless map[int]*shimLink
	// peak is the most processes live since memory was last given back
	// (see giveBackMemory); crowd says a crowd of them ended, and its
	// retained exits are still to go.
	peak  int
	crowd bool
	// crowdGone, if set, is called once a crowd's exits are forgotten,
	// for what else still remembers its processes.
	crowdGone func()
}

func newRegistry(retention time.Duration) *registry {
	return &registry{retention: retention, live: map[uint32]*proc{}, exited: map[uint32]*proc{}}
}

func (r *registry) add(p *proc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	p.seq = r.seq
	r.live[p.pid] = p
	if len(r.live) == 1 && !r.crowd {
		noteRest()
	}
	r.peak = max(r.peak, len(r.live))
	delete(r.exited, p.pid) // the pid was reused; the old exit is stale
}

// retire moves an exited process to the retention map and forgets it after
// the retention period. Both steps check identity, so a reused pid is safe.
func (r *registry) retire(p *proc) {
	r.mu.Lock()
	if r.live[p.pid] == p {
		delete(r.live, p.pid)
	}
	if _, newer := r.live[p.pid]; !newer {
		r.exited[p.pid] = p
	}
	if r.peak >= giveBackPeak && len(r.live) <= r.peak/4 {
		r.peak, r.crowd = len(r.live), true
	}
	if r.crowd {
		giveBackMemory()
	}
	r.expiring = append(r.expiring, retainedExit{p, time.Now().Add(r.retention)})
	if r.expiry == nil {
		r.expiry = time.AfterFunc(r.retention, r.expire)
	}
	r.mu.Unlock()
}

// retainedExit is an exit kept until at.
type retainedExit struct {
	p  *proc
	at time.Time
}

// expire forgets the exits whose retention is over, and arms the timer
// for the next.
func (r *registry) expire() {
	r.mu.Lock()
	now := time.Now()
	i := 0
	for ; i < len(r.expiring) && !r.expiring[i].at.After(now); i++ {
		if p := r.expiring[i].p; r.exited[p.pid] == p {
			delete(r.exited, p.pid)
		}
		r.expiring[i] = retainedExit{}
	}
	r.expiring = r.expiring[i:]
	if len(r.expiring) == 0 {
		r.expiring, r.expiry = nil, nil
	} else {
		r.expiry.Reset(r.expiring[0].at.Sub(now))
	}
	gone := r.crowd && len(r.exited) == 0
	if gone {
		// A Go map keeps the room of the most entries it ever held:
		// after a thousand processes, a thousand slots each.
		r.crowd = false
		r.live, r.exited = copied(r.live), copied(r.exited)
	}
	r.mu.Unlock()
	if gone {
		// The crowd's exits are forgotten: what they held goes back too.
		if r.crowdGone != nil {
			r.crowdGone()
		}
		giveBackMemory()
	}
}

// copied is m in a map of its size.
func copied(m map[uint32]*proc) map[uint32]*proc {
	c := make(map[uint32]*proc, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// giveBackPeak is how many live processes make their end worth giving
// memory back for: once a quarter or fewer of them remain.
const giveBackPeak = 64

// giveBack is the one pending give-back (see giveBackMemory).
var giveBack struct {
	mu sync.Mutex
	t  *time.Timer
}

// giveBackMemory returns the heap a crowd of processes left (their
// streams, connections and goroutine stacks) to the system a second
// after the last of them ended, where Go's background scavenger would
// take minutes: an agent that ran a thousand commands leaves the daemon
// about as small as it found it. Each call moves the give-back to a
// second from now.
func giveBackMemory() {
	giveBack.mu.Lock()
	defer giveBack.mu.Unlock()
	if giveBack.t == nil {
		giveBack.t = time.AfterFunc(time.Second, func() {
			// Two collections: pooled buffers (net/http's per-connection
			// readers and writers) survive the first in sync.Pool's victim
			// cache.
			runtime.GC()
			debug.FreeOSMemory()
			shedThreads(int(restingThreads.Load()))
		})
		return
	}
	giveBack.t.Reset(time.Second)
}

// lookup finds a process by selector, live ones first. With several
// processes sharing a tag, the most recently started wins.
func (r *registry) lookup(sel *process.ProcessSelector) (*proc, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch s := sel.GetSelector().(type) {
	case *process.ProcessSelector_Pid:
		if p := r.live[s.Pid]; p != nil {
			return p, nil
		}
		if p := r.exited[s.Pid]; p != nil {
			return p, nil
		}
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process with pid %d not found", s.Pid))
	case *process.ProcessSelector_Tag:
		if p := newestTagged(r.live, s.Tag); p != nil {
			return p, nil
		}
		if p := newestTagged(r.exited, s.Tag); p != nil {
			return p, nil
		}
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process with tag %q not found", clip(s.Tag)))
	default:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("process selector is empty: set pid or tag"))
	}
}

func newestTagged(m map[uint32]*proc, tag string) *proc {
	var best *proc
	for _, p := range m {
		if p.tag != nil && *p.tag == tag && (best == nil || p.seq > best.seq) {
			best = p
		}
	}
	return best
}

// lookupLive is lookup restricted to running processes.
func (r *registry) lookupLive(sel *process.ProcessSelector) (*proc, error) {
	p, err := r.lookup(sel)
	if err != nil {
		return nil, err
	}
	if p.exited() {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("process %d has already exited", p.pid))
	}
	return p, nil
}

// byPid returns a live or retained process.
func (r *registry) byPid(pid uint32) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	if p := r.live[pid]; p != nil {
		return p
	}
	return r.exited[pid]
}

// liveByPid is the running process with pid, or nil.
func (r *registry) liveByPid(pid int) *proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[uint32(pid)]
}

// isShim says whether pid is a connected shim.
func (r *registry) isShim(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shims[pid] != nil
}

// liveProcs returns running processes in start order.
func (r *registry) liveProcs() []*proc {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*proc, 0, len(r.live))
	for _, p := range r.live {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].seq < out[j].seq })
	return out
}

// addShim records a live shim connection; removeShim forgets it.
func (r *registry) addShim(l *shimLink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shims == nil {
		r.shims, r.shimGroups = map[int]*shimLink{}, map[int]*shimLink{}
	}
	r.shims[l.pid] = l
	r.shimGroups[l.pgid] = l
}

func (r *registry) removeShim(l *shimLink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shims[l.pid] == l {
		delete(r.shims, l.pid)
	}
	if r.shimGroups[l.pgid] == l {
		delete(r.shimGroups, l.pgid)
	}
}

func (r *registry) shimByPid(pid int) *shimLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shims[pid]
}

// shimByPgid finds the live shim of group pgid.
func (r *registry) shimByPgid(pgid int) *shimLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shimGroups[pgid]
}

// liveShims lists the shims still connected.
func (r *registry) liveShims() []*shimLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*shimLink, 0, len(r.shims))
	for _, l := range r.shims {
		out = append(out, l)
	}
	return out
}

// markShimChild tracks shims this OS process forked and still waits for,
// which the reaper must leave to os/exec.
func (r *registry) markShimChild(pid int, waiting bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shimChildren == nil {
		r.shimChildren = map[int]bool{}
	}
	if waiting {
		r.shimChildren[pid] = true
	} else {
		delete(r.shimChildren, pid)
	}
}

func (r *registry) isShimChild(pid int) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shimChildren[pid]
}

// addShimless records a shimless group; false when its group has one.
func (r *registry) addShimless(l *shimLink) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shimless == nil {
		r.shimless = map[int]*shimLink{}
	}
	if r.shimless[l.pgid] != nil {
		return false
	}
	r.shimless[l.pgid] = l
	return true
}

func (r *registry) removeShimless(l *shimLink) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shimless[l.pgid] == l {
		delete(r.shimless, l.pgid)
	}
}

// shimlessByPgid finds the shimless group pgid.
func (r *registry) shimlessByPgid(pgid int) *shimLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.shimless[pgid]
}

// shimlessGroups lists the shimless groups.
func (r *registry) shimlessGroups() []*shimLink {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*shimLink, 0, len(r.shimless))
	for _, l := range r.shimless {
		out = append(out, l)
	}
	return out
}
