package uisource

import (
	"context"
	"errors"

	"golang.org/x/sys/unix"

	"sandtop/backend/seam"
	"sandtop/ui"
)

// maxFinished bounds how many finished groups the table shows.
const maxFinished = 50

// Watch follows the seam's Watch and puts each snapshot in the TUI's
// terms. After a loss it waits out the backoff first; this runs on a
// tea.Cmd goroutine, never in Update.
func (s *backendSource) Watch(ctx context.Context) (<-chan ui.Snapshot, error) {
	if s.base.Err() != nil {
		return nil, errors.New("the source is closed")
	}
	ctx, cancel := context.WithCancel(ctx)
	stopClose := context.AfterFunc(s.base, cancel) // Close ends every watch
	fail := func(err error) (<-chan ui.Snapshot, error) {
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
	out := make(chan ui.Snapshot, 1)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer stopClose()
		defer cancel()
		defer close(out)
		defer w.Close()
		for snap := range w.C() {
			us := toUI(snap)
			s.remember(us)
			if !sendSnapshot(ctx, out, us) {
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

// toUI puts a seam snapshot in the TUI's terms. Groups without a pgid
// (published but never started) have no row.
func toUI(s seam.Snapshot) ui.Snapshot {
	out := ui.Snapshot{Taken: s.Taken, Groups: make([]ui.Group, 0, len(s.Groups)), Terminals: make([]ui.Terminal, 0, len(s.Terminals))}
	for _, g := range s.Groups {
		if g.PGID <= 1 {
			continue
		}
		tag := g.Tag
		if user, ok := seam.TerminalUserTag(tag); ok {
			tag = user // a terminal's group: its tag as ls shows it, not the marker
		}
		ug := ui.Group{PGID: g.PGID, SID: g.SID, LeaderPID: g.LeaderPID, Tag: tag, Origin: originOf(g.Origin),
			Argv: g.Argv, PTY: g.PTY, Settled: !g.State.Live(), Started: g.Started, Members: processes(g.Members), Stuck: g.Stuck,
			ID: g.ID, StateDir: g.StateDir, Supervisor: g.Supervisor, Problem: g.Problem}
		if g.ExitCode != nil {
			ug.Exit = &ui.ExitStatus{Code: *g.ExitCode}
			if g.Signal != "" {
				ug.Exit.Signal = int(unix.SignalNum(g.Signal))
			}
		}
		out.Groups = append(out.Groups, ug)
	}
	for _, t := range s.Terminals {
		ut := ui.Terminal{PID: t.PID, SID: t.SID, ForegroundPGID: t.ForegroundPGID, InputWaiting: t.InputWaiting,
			Rows: t.Rows, Cols: t.Cols, Argv: t.Argv, Tag: t.Tag, Started: t.Started}
		ut.Title = terminalTitle(ut, out.Groups)
		out.Terminals = append(out.Terminals, ut)
	}
	return out
}

func processes(ps []seam.ProcessView) []ui.Process {
	if len(ps) == 0 {
		return nil
	}
	out := make([]ui.Process, len(ps))
	for i, p := range ps {
		out[i] = ui.Process{PID: p.PID, PPID: p.PPID, PGID: p.PGID, SID: p.SID, State: p.State, Argv: p.Argv,
			Comm: p.Comm, TTY: p.TTY, Started: p.Started, CPUPercent: p.CPUPercent, RSSBytes: p.RSSBytes}
	}
	return out
}

func originOf(o seam.GroupOrigin) ui.Origin {
	switch o {
	case seam.OriginSandtop:
		return ui.OriginSandtop
	case seam.OriginAgent:
		return ui.OriginAgent
	case seam.OriginEnvd:
		return ui.OriginEnvd
	}
	return ui.OriginForeign
}

// terminalTitle names a terminal by what runs in its foreground.
func terminalTitle(t ui.Terminal, groups []ui.Group) string {
	for i := range groups {
		if groups[i].PGID != t.ForegroundPGID {
			continue
		}
		for _, m := range groups[i].Members {
			if m.PID == groups[i].PGID {
				return m.CommandLine()
			}
		}
	}
	return ""
}
