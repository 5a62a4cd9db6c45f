package seam

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/seam/control"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/stuck"
)

// WatchOptions shape a Watch (and a Snapshot).
type WatchOptions struct {
	// Interval is the most often the process table is read; zero means one
	// second. Without the extension the table is polled, never more often
	// than once a second.
	Interval time.Duration
	// Workspaces are where an agent's published state is looked for,
	// besides the working directories of the processes the table shows.
	Workspaces []string
	// MaxFinished bounds the finished groups shown; zero shows them all.
	MaxFinished int
	// Stuck are the rules that flag a group as stuck; nil means
	// stuck.Default().
	Stuck *stuck.Rules
	// LiveOnly makes a Snapshot read only the live table and the
	// terminals, not the published state of finished groups or agents'
	// workspaces: enough to count what runs (a fleet's summary), at half
	// the requests.
	LiveOnly bool
	// Groups, with LiveOnly, are the only process groups the caller asks
	// about: on sandtop's daemon each is read alone (up to maxGroupReads
	// of them) instead of the whole table, so a kill of one group among a
	// thousand reads one group. The snapshot may hold others.
	Groups []int
}

// maxGroupReads is how many groups a Snapshot reads one by one before a
// read of the whole table is cheaper.
const maxGroupReads = 16

// firstTableTimeout bounds a watch's first read, so that a dead daemon is
// an error rather than a wait.
const firstTableTimeout = 10 * time.Second

// tableFeed produces live tables: the Supervisor's WatchGroups stream, or
// ps polled through Process.Start on stock envd.
type tableFeed interface {
	// next blocks until the next table; an error other than ctx's is the
	// connection's loss.
	next(ctx context.Context) (liveTable, error)
	// close stops the feed and waits for its goroutines.
	close()
}

func (r *Runtime) openFeed(ctx context.Context, interval time.Duration) (tableFeed, error) {
	if ext, ok := r.control.(control.Extension); ok {
		return openExtFeed(ctx, ext.Supervisor, interval)
	}
	return openCompatFeed(r, interval), nil
}

// Snapshot reads the sandbox once: the live table, every published group
// (sandtop's and agents'), and the terminals. On sandtop's daemon the
// process table is read once for all of it.
func (r *Runtime) Snapshot(ctx context.Context, opts WatchOptions) (sandbox.Snapshot, error) {
	ctx = control.OneTable(ctx)
	var t liveTable
	var own []PublishedGroup
	var ownErr error
	if ext, ok := r.control.(control.Extension); ok {
		var resp *sandtopv1.ListGroupsResponse
		var err error
		if opts.LiveOnly && len(opts.Groups) > 0 && len(opts.Groups) <= maxGroupReads {
			resp, err = ext.GroupsTable(ctx, opts.Groups)
		} else {
			resp, err = ext.FullTable(ctx)
		}
		if err != nil {
			return sandbox.Snapshot{}, err
		}
		t = extTable(resp.GetTakenUnixMs(), resp.GetGroups(), readExtTerminals(ctx, ext.Supervisor, nil))
		if !opts.LiveOnly {
			own, ownErr = r.publishedOwn(ctx)
		}
	} else {
		// On stock envd the table and the published state are a command
		// each: both run at once (the scan judges against the same ps,
		// which OneTable runs once).
		scanned := make(chan struct{})
		go func() {
			defer close(scanned)
			if !opts.LiveOnly {
				own, ownErr = r.publishedOwn(ctx)
			}
		}()
		f := openCompatFeed(r, 0)
		var err error
		t, err = f.poll(ctx)
		<-scanned
		if err != nil {
			return sandbox.Snapshot{}, err
		}
	}
	pub := newPublishedState()
	if opts.LiveOnly {
		snap := compose(t, pub, r.runtimeRoot(), opts.MaxFinished)
		judgeStuck(&snap, opts.Stuck, r.info.Extension, time.Now())
		return snap, nil
	}
	if ownErr != nil {
		return sandbox.Snapshot{}, ownErr
	}
	agents, err := r.agentGroups(ctx, opts.Workspaces...)
	if err != nil {
		return sandbox.Snapshot{}, err
	}
	now := time.Now()
	pub.groups = mergePublished(nil, own, false, now)
	pub.agent = mergePublished(nil, agents, true, now)
	for dir := range pub.groups {
		delete(pub.agent, dir) // our own root, found again from the table
	}
	snap := compose(t, pub, r.runtimeRoot(), opts.MaxFinished)
	judgeStuck(&snap, opts.Stuck, r.info.Extension, time.Now())
	return snap, nil
}

// publishedOwn reads sandtop's own state dirs, all of them in one call on
// either plane.
func (r *Runtime) publishedOwn(ctx context.Context) ([]PublishedGroup, error) {
	ctx, cancel := context.WithTimeout(ctx, scanTimeout)
	defer cancel()
	return r.listGroups(ctx)
}

// Watcher delivers snapshots of a sandbox as it changes.
type Watcher struct {
	r    *Runtime
	opts WatchOptions
	out  chan sandbox.Snapshot
	pub  *publishedState
	stop context.CancelFunc
	wg   sync.WaitGroup

	// table is the extension's last table, which the published scans
	// judge against (nil on stock envd: each scan reads its own).
	table atomic.Pointer[sandtopv1.ListGroupsResponse]

	mu  sync.Mutex
	err error
}

// Watch reads the first table before it returns, so that a dead daemon is
// an error here rather than an empty channel. Snapshots then arrive on C
// whenever the table changes (an undelivered one is replaced by the
// newer), until ctx ends, Close is called or the connection is lost: C is
// closed then, and Err says why. A sandbox found gone gets a last snapshot
// with every group settled, since nothing can run there.
func (r *Runtime) Watch(ctx context.Context, opts WatchOptions) (*Watcher, error) {
	if opts.Interval <= 0 {
		opts.Interval = time.Second
	}
	ctx, stop := context.WithCancel(ctx)
	f, err := r.openFeed(ctx, opts.Interval)
	if err != nil {
		stop()
		return nil, err
	}
	fctx, fcancel := context.WithTimeout(ctx, firstTableTimeout)
	first, err := f.next(fctx)
	fcancel()
	if err != nil {
		f.close()
		stop()
		return nil, err
	}
	w := &Watcher{r: r, opts: opts, out: make(chan sandbox.Snapshot, 1), pub: newPublishedState(), stop: stop}
	if ext, ok := f.(*extFeed); ok {
		w.table.Store(ext.table()) // before the first scan
	}
	w.wg.Add(2)
	go func() {
		defer w.wg.Done()
		w.scanPublished(ctx)
	}()
	go func() {
		defer w.wg.Done()
		defer stop()
		defer close(w.out)
		defer f.close()
		w.run(ctx, f, first)
	}()
	return w, nil
}

// C delivers the snapshots.
func (w *Watcher) C() <-chan sandbox.Snapshot { return w.out }

// Err is why the watch ended: nil while it runs, or when its context
// ended or Close stopped it.
func (w *Watcher) Err() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Gone reports whether the watch ended because the sandbox is gone.
func (w *Watcher) Gone() bool {
	err := w.Err()
	return err != nil && errors.Is(err, ErrSandboxGone)
}

// Close stops the watch and waits for its goroutines.
func (w *Watcher) Close() {
	w.stop()
	w.wg.Wait()
}

// run turns tables into snapshots until ctx ends or the connection is lost.
func (w *Watcher) run(ctx context.Context, f tableFeed, t liveTable) {
	var last sandbox.Snapshot
	var table liveTable
	var published uint64
	var judged time.Time
	for {
		if ext, ok := f.(*extFeed); ok {
			w.table.Store(ext.table())
		}
		// With the table and the published state as they were, the
		// snapshot would be the last one again: an idle sandbox costs
		// neither side a compose nor a redraw.
		if gen := w.pub.generation(); !t.unchanged || gen != published {
			if !t.unchanged {
				table = t
			}
			published = gen
			last = compose(table, w.pub, w.r.runtimeRoot(), w.opts.MaxFinished)
			judged = time.Now()
			judgeStuck(&last, w.opts.Stuck, w.r.info.Extension, judged)
			if !w.send(ctx, last) {
				return
			}
		} else if time.Since(judged) >= stuckRecheck {
			// Nothing changed but the time: a group may have become idle.
			judged = time.Now()
			if judgeStuck(&last, w.opts.Stuck, w.r.info.Extension, judged) && !w.send(ctx, last) {
				return
			}
		}
		var err error
		t, err = f.next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			gone := w.r.sandboxGone(err)
			if gone {
				err = errors.Join(ErrSandboxGone, err)
			}
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
			if gone {
				w.send(ctx, settleAll(last))
			}
			return
		}
	}
}

// send delivers snap, replacing an undelivered older one: a reader that is
// behind gets the present, not a queue.
func (w *Watcher) send(ctx context.Context, snap sandbox.Snapshot) bool {
	select {
	case <-w.out:
	default:
	}
	select {
	case w.out <- snap:
		return true
	case <-ctx.Done():
		return false
	}
}

// settleAll is what a gone sandbox looks like: every group settled (exit
// statuses kept), no member and no terminal left.
func settleAll(s sandbox.Snapshot) sandbox.Snapshot {
	out := sandbox.Snapshot{Taken: time.Now()}
	for _, g := range s.Groups {
		g.State, g.Members, g.Escapees = groupstate.Settled, nil, nil
		out.Groups = append(out.Groups, g)
	}
	return out
}

// scanPublished keeps the published state fresh beside the live feed, so a
// slow scan (many state dirs, a remote sandbox) never delays the table.
func (w *Watcher) scanPublished(ctx context.Context) {
	p := w.pub
	for {
		w.refreshPublished(ctx)
		t := time.NewTimer(p.untilDue())
		select {
		case <-t.C:
		case <-p.kick:
			// The live table changed; untilDue now says when to look.
			t.Stop()
			continue
		case <-ctx.Done():
			t.Stop()
			return
		}
	}
}

// untilDue is the wait until the next scan is due.
func (p *publishedState) untilDue() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	next := p.nextOwn
	if p.nextAgent.Before(next) {
		next = p.nextAgent
	}
	return max(time.Until(next), 50*time.Millisecond)
}

// refreshPublished rescans what is due. A failed scan keeps the previous
// result and is retried later: the table is not the place to report it,
// and an absent agent root is not an error at all.
func (w *Watcher) refreshPublished(ctx context.Context) {
	p := w.pub
	now := time.Now()
	if t := w.table.Load(); t != nil {
		ctx = control.WithTable(ctx, t)
	}
	p.mu.Lock()
	ownDue, agentDue := !now.Before(p.nextOwn), !now.Before(p.nextAgent)
	p.mu.Unlock()
	if ownDue {
		start := time.Now()
		infos, err := w.r.publishedOwn(ctx)
		p.record(false, start, now, infos, err)
	}
	if agentDue {
		start := time.Now()
		actx, cancel := context.WithTimeout(ctx, scanTimeout)
		// The seam finds agents' groups from the process table; the
		// workspaces' agent roots are read as well.
		infos, err := w.r.agentGroups(actx, w.opts.Workspaces...)
		cancel()
		p.record(true, start, now, infos, err)
	}
}

// record keeps one scan's result (sandtop's own state, or agents'), when
// it started and how long it took, and paces the next one.
func (p *publishedState) record(agent bool, start, now time.Time, infos []PublishedGroup, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	last, took, next, every, into := &p.lastOwn, &p.ownTook, &p.nextOwn, scanEvery, &p.groups
	if agent {
		last, took, next, every, into = &p.lastAgent, &p.agentTook, &p.nextAgent, agentScanEvery, &p.agent
	}
	*last, *took = start, time.Since(start)
	*next = time.Now().Add(max(every, 3**took))
	if err == nil {
		if !samePublished(*into, infos, agent) {
			p.gen++
		}
		*into = mergePublished(*into, infos, agent, now)
	}
	if !agent && p.endsUnread() {
		// A group has left the table and its end is not published yet
		// (its supervisor writes it a moment later): look again after
		// the gap, not the idle pace, so its exit shows within seconds.
		if soon := time.Now().Add(max(scanGap, 3**took)); soon.Before(*next) {
			*next = soon
		}
	}
}

// endsUnread says whether a group the last scan found running has left
// the live table within the last minute (a record that never ends, from a
// supervisor killed before it wrote one, is not looked for again and
// again). Called with p.mu held.
func (p *publishedState) endsUnread() bool {
	if p.live == nil {
		return false // no table composed yet
	}
	for dir, pg := range p.groups {
		if pg.Pgid > 1 && (pg.State == groupstate.Running || pg.State == groupstate.LeaderExited) && !p.live[pg.Pgid] &&
			time.Since(p.argv[dir].seen) < argvMemory {
			return true
		}
	}
	return false
}
