package uisource

import (
	"context"
	"errors"
	"time"

	"sandtop/ui"
)

// firstTableTimeout bounds Watch's first read: the model calls Watch
// without a deadline, and a dead daemon must turn into an error.
const firstTableTimeout = 10 * time.Second

// liveTable is one reading of the sandbox's process table, before the
// finished groups and origins are added.
type liveTable struct {
	taken     time.Time
	groups    []ui.Group
	terminals []ui.Terminal
	// shims are the groups sandtop's daemon runs under a shim, by pgid:
	// the daemon names their state directory and requested argv.
	shims map[int]shimGroup
}

// shimGroup is what the daemon tells of a shim group beyond its members.
type shimGroup struct {
	stateDir string
	argv     []string
}

// tableFeed produces live tables: the Supervisor's WatchGroups stream, or ps
// polled through Process.Start on stock envd.
type tableFeed interface {
	// next blocks until the next table; an error other than ctx's is the
	// connection's loss.
	next(ctx context.Context) (liveTable, error)
	// close stops the feed and waits for its goroutines.
	close()
}

// Watch reads the first table before it returns, so a dead daemon is an
// error here rather than an empty screen. After a loss it waits out the
// backoff first; this runs on a tea.Cmd goroutine, never in Update.
func (s *backendSource) Watch(ctx context.Context) (<-chan ui.Snapshot, error) {
	ctx, cancel := context.WithCancel(ctx)
	stopClose := context.AfterFunc(s.base, cancel) // Close ends every watch
	if s.base.Err() != nil {
		stopClose()
		cancel()
		return nil, errors.New("the source is closed")
	}
	fail := func(err error) (<-chan ui.Snapshot, error) {
		stopClose()
		cancel()
		return nil, err
	}
	if err := s.conn.wait(ctx); err != nil {
		return fail(err)
	}
	f, err := s.openFeed(ctx)
	if err != nil {
		err = s.lossError(err, false)
		s.conn.lost(err)
		return fail(err)
	}
	fctx, fcancel := context.WithTimeout(ctx, firstTableTimeout)
	first, err := f.next(fctx)
	fcancel()
	if err != nil {
		f.close()
		if ctx.Err() == nil {
			err = s.lossError(err, false)
			s.conn.lost(err)
		}
		return fail(err)
	}
	s.conn.up()
	out := make(chan ui.Snapshot, 1)
	s.wg.Add(1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		s.scanPublished(ctx)
	}()
	go func() {
		defer s.wg.Done()
		defer stopClose()
		defer cancel()
		defer close(out)
		defer f.close()
		s.run(ctx, f, first, out)
	}()
	return out, nil
}

func (s *backendSource) openFeed(ctx context.Context) (tableFeed, error) {
	if s.compat {
		return s.openCompatFeed(), nil
	}
	return s.openExtFeed(ctx)
}

// run turns tables into snapshots until ctx ends or the connection is
// lost. A lost connection is recorded for Err; if the sandbox is gone, a
// last snapshot shows every group settled, since nothing can run there.
func (s *backendSource) run(ctx context.Context, f tableFeed, t liveTable, out chan ui.Snapshot) {
	var last ui.Snapshot
	for {
		last = s.compose(t)
		if !sendSnapshot(ctx, out, last) {
			return
		}
		var err error
		t, err = f.next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			gone := s.sandboxGone(err)
			s.conn.lost(s.lossError(err, gone))
			if gone {
				sendSnapshot(ctx, out, settleAll(last))
			}
			return
		}
	}
}

// sendSnapshot delivers snap, replacing an undelivered older one: a UI that is
// behind gets the present, not a queue.
func sendSnapshot(ctx context.Context, out chan ui.Snapshot, snap ui.Snapshot) bool {
	select {
	case <-out:
	default:
	}
	select {
	case out <- snap:
		return true
	case <-ctx.Done():
		return false
	}
}

// settleAll is what a gone sandbox looks like: every group settled (exit
// statuses kept), no member and no terminal left.
func settleAll(s ui.Snapshot) ui.Snapshot {
	out := ui.Snapshot{Taken: time.Now()}
	for _, g := range s.Groups {
		g.Settled, g.Members = true, nil
		out.Groups = append(out.Groups, g)
	}
	return out
}
