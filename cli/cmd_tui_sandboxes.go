package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/seam"
	"sandtop/backend/target"
	"sandtop/config"
	"sandtop/sandbox"
	"sandtop/stuck"
	"sandtop/ui"
	"sandtop/uisource"
)

// openTimeout bounds dialing one sandbox and its handshake, so a dead
// host shows as unreachable in the picker instead of "connecting" forever.
const openTimeout = 15 * time.Second

// tuiOpener turns selections into the TUI's sandboxes and remembers the connections
// the TUI opened, to drop their connections (only) when it exits. E2B
// sandboxes go through a fleet (one listing for all, see e2bFleet) and a
// bounded pool of connections (envdPool).
type tuiOpener struct {
	cfg config.Config
	log *slog.Logger

	// listPeriod and metricsGap override the fleet's defaults
	// (fleetListPeriod, fleetMetricsGap) when set: tests shorten them.
	listPeriod, metricsGap time.Duration

	mu    sync.Mutex
	conns []*target.Connection
	// stops end what runs for the TUI's life (the kube watches).
	stops []func()
	// arrivals carries the sandboxes that appear while the TUI runs
	// (pods created after start); nil when nothing announces any.
	arrivals chan ui.SandboxSpec
	pool     *envdPool
	closed   bool
	// known is what each E2B sandbox's daemon said of itself the first
	// time it was dialled: a fleet re-dials most sandboxes for every
	// refresh of their counts, and asks its Hello once.
	known map[string]*seam.Known
}

// knownOf is what sandbox id's daemon said of itself, or nil.
func (o *tuiOpener) knownOf(id string) *seam.Known {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.known[id]
}

// remember keeps, or with nil forgets, what id's daemon said of itself.
func (o *tuiOpener) remember(id string, k *seam.Known) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.known == nil {
		o.known = map[string]*seam.Known{}
	}
	if k == nil {
		delete(o.known, id)
		return
	}
	o.known[id] = k
}

// openConnections counts the pool's open connections.
func (o *tuiOpener) openConnections() int {
	o.mu.Lock()
	pool := o.pool
	o.mu.Unlock()
	if pool == nil {
		return 0
	}
	return pool.open()
}

// stuckRules are the config's [stuck] rules.
func (o *tuiOpener) stuckRules() *stuck.Rules {
	r := o.cfg.Stuck.Rules()
	return &r
}

// newFleet is a fleet with the opener's periods.
func (o *tuiOpener) newFleet(c *e2b.Client, opts e2b.ListOptions) *e2bFleet {
	f := newE2BFleet(c, opts)
	if o.listPeriod > 0 {
		f.period = o.listPeriod
	}
	if o.metricsGap > 0 {
		f.metricsGap = o.metricsGap
	}
	return f
}

// specs expands the selections (an --e2b listing may give several
// sandboxes, or none) into the specs of the TUI's sandboxes. A selection that cannot be resolved
// becomes a sandbox in error, retried when the operator picks it. initial
// is re-pointed at the first sandbox of the selection it named.
func (o *tuiOpener) specs(ctx context.Context, sels []selection, initial int) ([]ui.SandboxSpec, int) {
	var out []ui.SandboxSpec
	first := 0
	for i, sel := range sels {
		if i == initial {
			first = len(out)
		}
		if teamListing(sel) {
			out = append(out, o.e2bSpecs(ctx, sel)...)
			continue
		}
		if sel.isKube() {
			out = append(out, o.kubeSpecs(ctx, sel)...)
			continue
		}
		ts, err := sel.targets(ctx)
		if err != nil {
			out = append(out, ui.SandboxSpec{Name: sel.name, Kind: selKind(sel), Target: selWhere(sel), Err: err, ReadOnly: sel.readOnly, Open: o.retry(sel)})
			continue
		}
		for _, t := range ts {
			c := ui.SandboxSpec{Name: t.Name, Kind: string(t.Kind), Target: t.Endpoint, ReadOnly: sel.readOnly, Cwd: contextCwd(sel, t), Err: t.Err}
			switch {
			case t.E2B != nil:
				// Described once by the resolution; from now on its own
				// small fleet refreshes it.
				f := o.newFleet(t.Provider(), e2b.ListOptions{})
				f.only = t.SandboxID
				f.setListed([]e2b.Sandbox{*t.E2B})
				if t.Err == nil {
					f.described[t.SandboxID] = describedTarget{t: t, at: f.now()}
				}
				o.fillE2B(&c, f, t)
			case t.Err == nil:
				c.Open = o.open(t, c.Cwd)
			}
			out = append(out, c)
		}
	}
	return out, min(first, max(0, len(out)-1))
}

// teamListing says whether sel is an E2B team (or a metadata selection of
// it) and nothing else: those are read as a fleet, from the listing alone.
func teamListing(sel selection) bool {
	c := sel.cfg
	return c.E2B && c.E2BSandboxID == "" && !sel.startLocal && c.Local == "" && c.EnvdURL == ""
}

// e2bSpecs lists the team once (its pages) and makes a sandbox of
// every sandbox, none of them described or dialled yet.
func (o *tuiOpener) e2bSpecs(ctx context.Context, sel selection) []ui.SandboxSpec {
	fail := func(err error) []ui.SandboxSpec {
		return []ui.SandboxSpec{{Name: sel.name, Kind: selKind(sel), Target: selWhere(sel), Err: err, ReadOnly: sel.readOnly, Open: o.retry(sel)}}
	}
	tc := sel.cfg
	tc.Warn = warnOnce
	if sel.e2bKeyFile != "" {
		key, err := readAPIKey(sel.e2bKeyFile)
		if err != nil {
			return fail(err)
		}
		tc.E2BConfig.APIKey = key
	}
	client, err := target.E2BClient(tc)
	if err != nil {
		return fail(err)
	}
	f := o.newFleet(client, e2b.ListOptions{Metadata: tc.E2BMetadata})
	sbs, err := f.list(ctx)
	if err != nil {
		return fail(err)
	}
	sort.Slice(sbs, func(i, j int) bool { return sbs[i].ID < sbs[j].ID })
	out := make([]ui.SandboxSpec, 0, len(sbs))
	for _, sb := range sbs {
		t := target.FromListing(client, tc, sb)
		c := ui.SandboxSpec{Name: t.Name, Kind: string(t.Kind), ReadOnly: sel.readOnly, Cwd: contextCwd(sel, t), Err: t.Err}
		o.fillE2B(&c, f, t)
		out = append(out, c)
	}
	return out
}

// fillE2B gives c its control plane, its Open (describe once, dial
// only a running sandbox, pin the connection while it is shown) and its
// Summary (one snapshot over a pooled connection).
func (o *tuiOpener) fillE2B(c *ui.SandboxSpec, f *e2bFleet, t target.Target) {
	c.Provider, c.ProviderInfo = e2bProvider{f: f, id: t.SandboxID}, planeInfo(*t.E2B)
	c.Target = "e2b sandbox " + t.SandboxID
	cwd := c.Cwd
	c.Open = func(ctx context.Context) (ui.Source, error) {
		s, release, err := o.e2bConnection(ctx, f, t, true)
		if err != nil {
			return nil, err
		}
		release(false) // pinned: it stays open while the TUI runs
		return uisource.New(s.Runtime, uisource.Options{Name: t.Name, Target: s.Target.Endpoint, Cwd: cwd, Grace: o.cfg.Grace, Stuck: o.stuckRules()})
	}
	c.Summary = func(ctx context.Context) (sandbox.Snapshot, error) {
		s, release, err := o.e2bConnection(ctx, f, t, false)
		if err != nil {
			return sandbox.Snapshot{}, err
		}
		snap, err := uisource.Summary(ctx, s.Runtime, o.stuckRules())
		if err != nil {
			o.remember(t.SandboxID, nil) // the next dial asks its daemon again
		}
		release(err != nil)
		return snap, err
	}
}

// e2bConnection borrows t's connection from the pool, describing the sandbox
// first if it never was.
func (o *tuiOpener) e2bConnection(ctx context.Context, f *e2bFleet, t target.Target, pin bool) (*target.Connection, func(bool), error) {
	pool, err := o.connections()
	if err != nil {
		return nil, nil, err
	}
	return pool.acquire(ctx, t.Name, pin, func(ctx context.Context) (*target.Connection, error) {
		now, err := f.connTarget(ctx, t)
		if err != nil {
			return nil, err
		}
		c, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		s, err := target.Open(c, now, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: cwdOf(now), Logger: o.log,
			Known: o.knownOf(t.SandboxID)})
		if err != nil {
			f.connFailed(t.SandboxID)
			o.remember(t.SandboxID, nil)
			return nil, err
		}
		o.remember(t.SandboxID, s.Runtime.Known())
		return s, nil
	})
}

// connections is the TUI's pool of connections, made on first use; an
// error once the TUI is closing.
func (o *tuiOpener) connections() (*envdPool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil, errors.New("the TUI is closing")
	}
	if o.pool == nil {
		o.pool = newEnvdPool(poolMax, poolIdle)
	}
	return o.pool, nil
}

// cwdOf is a remote target's default directory.
func cwdOf(t target.Target) string {
	if t.Cwd != "" {
		return t.Cwd
	}
	return "/"
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
		o.conns = append(o.conns, s)
		o.mu.Unlock()
		return uisource.New(s.Runtime, uisource.Options{Name: t.Name, Target: t.Endpoint, Cwd: cwd, Grace: o.cfg.Grace, Stuck: o.stuckRules()})
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
	pool := o.pool
	o.pool, o.closed = nil, true
	for _, s := range o.conns {
		s.Close()
	}
	o.conns = nil
	stops := o.stops
	o.stops = nil
	o.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	if pool != nil {
		pool.closeAll()
	}
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
	case sel.isKube():
		return string(target.KindKube)
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
	case sel.isKube():
		return "Kubernetes API server"
	}
	return "E2B control plane"
}
