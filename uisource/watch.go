package uisource

import (
	"context"
	"errors"

	"sandtop/backend/seam"
	"sandtop/sandbox"
)

// maxFinished bounds how many finished groups the table shows.
const maxFinished = 50

// Watch follows the seam's Watch and hands on each snapshot as the seam
// made it. After a loss it waits out the backoff first; this runs on a
// tea.Cmd goroutine, never in Update.
func (s *backendSource) Watch(ctx context.Context) (<-chan sandbox.Snapshot, error) {
	if s.base.Err() != nil {
		return nil, errors.New("the source is closed")
	}
	ctx, cancel := context.WithCancel(ctx)
	stopClose := context.AfterFunc(s.base, cancel) // Close ends every watch
	fail := func(err error) (<-chan sandbox.Snapshot, error) {
		stopClose()
		cancel()
		return nil, err
	}
	if err := s.conn.wait(ctx); err != nil {
		return fail(err)
	}
	w, err := s.rt.Watch(ctx, seam.WatchOptions{Interval: s.opts.Interval, Workspaces: []string{s.opts.Cwd}, MaxFinished: maxFinished, Stuck: s.opts.Stuck})
	if err != nil {
		if ctx.Err() == nil {
			err = s.lossError(err, false)
			s.conn.lost(err)
		}
		return fail(err)
	}
	s.conn.up()
	out := make(chan sandbox.Snapshot, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stopClose()
		defer cancel()
		defer close(out)
		defer w.Close()
		for snap := range w.C() {
			s.remember(snap)
			if !sendSnapshot(ctx, out, snap) {
				return
			}
		}
		if err := w.Err(); err != nil && ctx.Err() == nil {
			s.conn.lost(s.lossError(err, w.Gone()))
		}
	}()
	return out, nil
}

// sendSnapshot delivers snap, replacing an undelivered older one: a UI that is
// behind gets the present, not a queue.
func sendSnapshot(ctx context.Context, out chan sandbox.Snapshot, snap sandbox.Snapshot) bool {
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
