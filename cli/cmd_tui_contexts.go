package cli

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"sandtop/backend/seam"
	"sandtop/backend/target"
	"sandtop/config"
	"sandtop/ui"
	"sandtop/uisource"
)

// openTimeout bounds dialing one sandbox and its handshake, so a dead
// host shows as unreachable in the picker instead of "connecting" forever.
const openTimeout = 15 * time.Second

// tuiOpener turns selections into TUI contexts and remembers the sessions
// the TUI opened, to drop their connections (only) when it exits.
type tuiOpener struct {
	cfg config.Config
	log *slog.Logger

	mu       sync.Mutex
	sessions []*target.Session
}

// contexts expands the selections (an --e2b listing may give several
// sandboxes, or none) into contexts. A selection that cannot be resolved
// becomes a context in error, retried when the operator picks it. initial
// is re-pointed at the first context of the selection it named.
func (o *tuiOpener) contexts(ctx context.Context, sels []selection, initial int) ([]ui.Context, int) {
	var out []ui.Context
	first := 0
	for i, sel := range sels {
		if i == initial {
			first = len(out)
		}
		ts, err := sel.targets(ctx)
		if err != nil {
			out = append(out, ui.Context{Name: sel.name, Kind: selKind(sel), Target: selWhere(sel), Err: err, ReadOnly: sel.readOnly, Open: o.retry(sel)})
			continue
		}
		for _, t := range ts {
			c := ui.Context{Name: t.Name, Kind: string(t.Kind), Target: t.Endpoint, ReadOnly: sel.readOnly, Cwd: contextCwd(sel, t), Err: t.Err}
			switch {
			case t.E2B != nil:
				// Described, not connected: opening describes it again and
				// dials only a running sandbox, so a paused one stays paused
				// until the operator resumes it.
				c.Plane, c.PlaneInfo = e2bPlane{c: t.ControlPlane(), id: t.SandboxID}, planeInfo(*t.E2B)
				if c.Target == "" {
					c.Target = "e2b sandbox " + t.SandboxID
				}
				c.Open = o.openE2B(t, c.Cwd)
			case t.Err == nil:
				c.Open = o.open(t, c.Cwd)
			}
			out = append(out, c)
		}
	}
	return out, min(first, max(0, len(out)-1))
}

// open dials t and adapts it for the TUI.
func (o *tuiOpener) open(t target.Target, cwd string) func(context.Context) (ui.Source, error) {
	return func(ctx context.Context) (ui.Source, error) {
		c, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		s, err := target.Open(c, t, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: cwd, Logger: o.log})
		if err != nil {
			return nil, err
		}
		o.mu.Lock()
		o.sessions = append(o.sessions, s)
		o.mu.Unlock()
		return uisource.New(s.Runtime, uisource.Options{Name: t.Name, Target: t.Endpoint, Cwd: cwd, Grace: o.cfg.Grace})
	}
}

// openE2B describes the sandbox again (no side effect) and dials it only
// if it runs; a paused one gives an error wrapping target.ErrPaused.
func (o *tuiOpener) openE2B(t target.Target, cwd string) func(context.Context) (ui.Source, error) {
	return func(ctx context.Context) (ui.Source, error) {
		now, err := target.Refresh(ctx, t)
		if err != nil {
			return nil, err
		}
		if now.Err != nil {
			return nil, now.Err
		}
		return o.open(now, cwd)(ctx)
	}
}

// retry resolves a selection again (the local daemon may start now, a
// token file may have appeared) and opens it if it names one sandbox.
func (o *tuiOpener) retry(sel selection) func(context.Context) (ui.Source, error) {
	return func(ctx context.Context) (ui.Source, error) {
		ts, err := sel.targets(ctx)
		if err != nil {
			return nil, err
		}
		if len(ts) != 1 || ts[0].Err != nil {
			return nil, fmt.Errorf("%s lists %d sandboxes now; restart sandtop to see them", sel.name, len(ts))
		}
		return o.open(ts[0], contextCwd(sel, ts[0]))(ctx)
	}
}

// closeAll drops every connection; nothing in the sandboxes is signalled.
func (o *tuiOpener) closeAll() {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, s := range o.sessions {
		s.Close()
	}
	o.sessions = nil
}

// contextCwd is where :run starts programs: the caller's directory on the
// local sandbox (it shares this filesystem), the target's default elsewhere.
func contextCwd(sel selection, t target.Target) string {
	switch {
	case sel.startLocal || t.Kind == target.KindLocal:
		return cwd()
	case t.Cwd != "":
		return t.Cwd
	}
	return "/"
}

func selKind(sel selection) string {
	switch {
	case sel.startLocal || sel.cfg.Local != "":
		return string(target.KindLocal)
	case sel.expands || sel.cfg.E2BSandboxID != "":
		return string(target.KindE2B)
	}
	return string(target.KindEnvd)
}

// selWhere says where a selection points, without secrets.
func selWhere(sel selection) string {
	switch {
	case sel.cfg.Local != "":
		return sel.cfg.Local
	case sel.cfg.EnvdURL != "":
		return target.RedactURL(sel.cfg.EnvdURL)
	case sel.startLocal:
		return "local daemon"
	}
	return "E2B control plane"
}
