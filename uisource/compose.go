package uisource

import (
	"context"
	"time"

	"sandtop/ui"
)

// compose turns a live table into the snapshot the model shows: wrapper
// halves folded into one row, exit statuses and finished groups from the
// published state, origins marked, terminals named by their foreground.
func (s *backendSource) compose(t liveTable) ui.Snapshot {
	groups, dirs := foldWrappers(t.groups, t.shims)
	nLive := len(groups)
	groups, agentPgids := s.pub.addPublished(groups, dirs)
	markOrigins(groups[:nLive], dirs, s.rt.RuntimeRoot(), agentPgids, sandtopSessions(t.terminals))
	terms := make([]ui.Terminal, len(t.terminals))
	for i, tm := range t.terminals {
		tm.Title = terminalTitle(tm, groups)
		terms[i] = tm
	}
	return ui.Snapshot{Taken: t.taken, Groups: groups, Terminals: terms}
}

// terminalTitle names a terminal by what runs in its foreground.
func terminalTitle(t ui.Terminal, groups []ui.Group) string {
	for i := range groups {
		if groups[i].PGID != t.ForegroundPGID {
			continue
		}
		if l := leaderOf(&groups[i]); l != nil {
			return l.CommandLine()
		}
	}
	return ""
}

// scanPublished keeps the published state fresh beside the live feed, so
// a slow scan (many state dirs, a remote sandbox) never delays the table.
func (s *backendSource) scanPublished(ctx context.Context) {
	for {
		s.refreshPublished(ctx)
		t := time.NewTimer(s.pub.untilDue())
		select {
		case <-t.C:
		case <-s.pub.kick:
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
