package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/target"
	"sandtop/ui"
)

// The TUI's view of E2B's control plane for a whole fleet. The state, end
// time, alias and metadata of every sandbox come from one paginated
// listing (GET /v2/sandboxes, 100 a page) swept every fleetListPeriod for
// the whole fleet, never from a GET per sandbox per tick. A sandbox is
// described (GET /sandboxes/{id}) only for what the listing lacks, its
// envd address and token, when sandtop first connects to it; the answer
// is kept for later connections. Metrics are asked for one sandbox at a
// time, at most one every fleetMetricsGap. A 429, a 5xx or an unreachable
// control plane makes every request wait out a jittered backoff, which
// the TUI shows. Resume and Extend run only on a confirmed action.

const (
	// fleetListPeriod is how old the listing may get: 1,000 sandboxes
	// are 10 pages, one request every 3 s on average.
	fleetListPeriod = 30 * time.Second
	// fleetMetricsGap spaces metrics requests across the fleet.
	fleetMetricsGap = 2 * time.Second
	// fleetRequestTimeout bounds one sweep (all its pages) or describe.
	fleetRequestTimeout = 60 * time.Second
	// fleetRedescribeAfter is how old a kept describe must be before a
	// failed connection asks for it again (a token does not change while
	// a sandbox lives; this only covers a control plane that says
	// otherwise).
	fleetRedescribeAfter = 5 * time.Minute
)

// errBackingOff is what a request that waits out a backoff gets.
var errBackingOff = errors.New("e2b control plane: backing off")

// e2bFleet is shared by every E2B sandbox of one TUI. It is safe for
// concurrent use (the TUI calls it from its commands' goroutines).
type e2bFleet struct {
	c    *e2b.Client
	opts e2b.ListOptions
	// only, when set, is the one sandbox this fleet watches (a target
	// named by id): its sweep is that sandbox's describe, not the team's
	// listing.
	only string
	now  func() time.Time

	// period and metricsGap are fleetListPeriod and fleetMetricsGap;
	// tests shorten them.
	period, metricsGap time.Duration

	backoff e2b.Backoff

	mu         sync.Mutex
	listed     map[string]e2b.Sandbox
	listedAt   time.Time
	sweep      chan struct{} // closed when the sweep in flight ends
	sweepErr   error
	lastMetric time.Time
	// described keeps each sandbox's describe answer (address, token),
	// and when it was read; fresh marks the sandboxes whose next Describe
	// asks the control plane directly (after a resume or an extend).
	described map[string]describedTarget
	fresh     map[string]bool
}

type describedTarget struct {
	t  target.Target
	at time.Time
}

func newE2BFleet(c *e2b.Client, opts e2b.ListOptions) *e2bFleet {
	return &e2bFleet{c: c, opts: opts, now: time.Now, period: fleetListPeriod, metricsGap: fleetMetricsGap,
		listed: map[string]e2b.Sandbox{}, described: map[string]describedTarget{}, fresh: map[string]bool{}}
}

// list sweeps the listing now (all pages) and records it.
func (f *e2bFleet) list(ctx context.Context) ([]e2b.Sandbox, error) {
	if err := f.mayAsk(); err != nil {
		return nil, err
	}
	sbs, err := f.c.List(ctx, f.opts)
	if f.record(err) != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.setListed(sbs)
	return sbs, nil
}

// setListed replaces the listing; mu is held. A sandbox whose state
// changed loses its kept describe: a resumed one may have moved.
func (f *e2bFleet) setListed(sbs []e2b.Sandbox) {
	next := make(map[string]e2b.Sandbox, len(sbs))
	for _, sb := range sbs {
		next[sb.ID] = sb
		if was, ok := f.listed[sb.ID]; ok && was.State != sb.State {
			delete(f.described, sb.ID)
		}
	}
	for id := range f.described {
		if _, ok := next[id]; !ok {
			delete(f.described, id)
		}
	}
	f.listed, f.listedAt = next, f.now()
}

// mayAsk refuses a request while the backoff runs.
func (f *e2bFleet) mayAsk() error {
	if wait, why := f.backoff.Waiting(f.now()); wait > 0 {
		return fmt.Errorf("%w after %s, %s more", errBackingOff, why, wait.Round(time.Second))
	}
	return nil
}

// record feeds a request's outcome to the backoff and returns err.
func (f *e2bFleet) record(err error) error {
	switch {
	case err == nil:
		f.backoff.OK()
	default:
		f.backoff.Fail(err, f.now())
	}
	return err
}

// fresh enough, or sweep: one caller lists, the others wait for it.
func (f *e2bFleet) sweepIfStale(ctx context.Context) error {
	f.mu.Lock()
	if !f.listedAt.IsZero() && f.now().Sub(f.listedAt) < f.period {
		f.mu.Unlock()
		return nil
	}
	if ch := f.sweep; ch != nil {
		f.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.sweepErr
	}
	if err := f.mayAsk(); err != nil {
		f.mu.Unlock()
		return err
	}
	ch := make(chan struct{})
	f.sweep = ch
	f.mu.Unlock()
	// The sweep serves every waiter, so no one caller's deadline ends it.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), fleetRequestTimeout)
	sbs, err := f.sweepOnce(sctx)
	cancel()
	f.record(err)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sweep, f.sweepErr = nil, err
	close(ch)
	if err == nil {
		f.setListed(sbs)
	}
	return err
}

// sweepOnce reads the fleet: the listing's pages, or the one sandbox.
func (f *e2bFleet) sweepOnce(ctx context.Context) ([]e2b.Sandbox, error) {
	if f.only == "" {
		return f.c.List(ctx, f.opts)
	}
	sb, _, err := f.c.Describe(ctx, f.only)
	if errors.Is(err, e2b.ErrSandboxGone) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return []e2b.Sandbox{sb}, nil
}

// describe is one sandbox's state as the last listing had it. A sandbox
// the listing no longer has is gone; one the control plane is not asked
// about right now (backoff) keeps its last known state.
func (f *e2bFleet) describe(ctx context.Context, id string) (e2b.Sandbox, error) {
	f.mu.Lock()
	direct := f.fresh[id]
	f.mu.Unlock()
	if direct {
		if err := f.mayAsk(); err == nil {
			sb, _, err := f.c.Describe(ctx, id)
			if f.record(err); err == nil || errors.Is(err, e2b.ErrSandboxGone) {
				f.mu.Lock()
				delete(f.fresh, id)
				delete(f.described, id)
				if err == nil {
					f.listed[id] = sb
				} else {
					delete(f.listed, id)
				}
				f.mu.Unlock()
			}
			return sb, err
		}
	}
	err := f.sweepIfStale(ctx)
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.listed[id]; ok {
		return sb, nil
	}
	if err != nil || f.listedAt.IsZero() {
		return e2b.Sandbox{}, err
	}
	return e2b.Sandbox{}, fmt.Errorf("%w: %s is no longer listed (killed or expired)", e2b.ErrSandboxGone, id)
}

// connTarget is t with its envd address and token: described once, then
// kept. A paused sandbox gives an Err wrapping target.ErrPaused and is not
// dialled.
func (f *e2bFleet) connTarget(ctx context.Context, t target.Target) (target.Target, error) {
	f.mu.Lock()
	d, ok := f.described[t.SandboxID]
	f.mu.Unlock()
	if ok {
		return d.t, nil
	}
	if err := f.mayAsk(); err != nil {
		return t, err
	}
	now, err := target.Refresh(ctx, t)
	if f.record(err) != nil {
		return t, err
	}
	if now.Err == nil {
		f.mu.Lock()
		f.described[t.SandboxID] = describedTarget{t: now, at: f.now()}
		if now.E2B != nil {
			f.listed[t.SandboxID] = *now.E2B
		}
		f.mu.Unlock()
	}
	return now, now.Err
}

// connFailed drops a kept describe that may be stale, so the next
// connection asks again; a recent one is kept (the control plane is not
// asked once per failed dial).
func (f *e2bFleet) connFailed(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if d, ok := f.described[id]; ok && f.now().Sub(d.at) >= fleetRedescribeAfter {
		delete(f.described, id)
	}
}

// metric asks for id's newest sample unless another metrics request went
// less than metricsGap ago (ok false then: the caller keeps what it has).
func (f *e2bFleet) metric(ctx context.Context, id string) (e2b.Metric, bool, error) {
	f.mu.Lock()
	now := f.now()
	if now.Sub(f.lastMetric) < f.metricsGap {
		f.mu.Unlock()
		return e2b.Metric{}, false, nil
	}
	f.lastMetric = now
	f.mu.Unlock()
	if err := f.mayAsk(); err != nil {
		return e2b.Metric{}, false, nil
	}
	m, ok, err := f.c.LatestMetric(ctx, id)
	return m, ok, f.record(err)
}

// Backoff says how long the fleet still waits before asking the control
// plane again, and why (ui.PlaneBackoff).
func (f *e2bFleet) Backoff() (time.Duration, string) { return f.backoff.Waiting(f.now()) }

// acted marks id for a direct describe: a resume or an extend just
// changed it, and waiting for the next sweep would show the old state.
func (f *e2bFleet) acted(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fresh[id] = true
	delete(f.described, id)
}

// e2bProvider shows one E2B sandbox's control plane to the TUI, through the
// fleet it belongs to.
type e2bProvider struct {
	f  *e2bFleet
	id string
}

// planeErr marks E2B's "sandbox not found" as the TUI's ErrSandboxGone.
func planeErr(err error) error {
	if errors.Is(err, e2b.ErrSandboxGone) {
		return fmt.Errorf("%w: %w", ui.ErrSandboxGone, err)
	}
	return err
}

func (p e2bProvider) DefaultTimeout() time.Duration { return e2b.DefaultConnectTimeout }

func (p e2bProvider) Describe(ctx context.Context) (ui.ProviderInfo, error) {
	sb, err := p.f.describe(ctx, p.id)
	if err != nil {
		return ui.ProviderInfo{}, planeErr(err)
	}
	return planeInfo(sb), nil
}

func (p e2bProvider) Metrics(ctx context.Context) (ui.ProviderMetrics, bool, error) {
	m, ok, err := p.f.metric(ctx, p.id)
	if err != nil || !ok {
		return ui.ProviderMetrics{}, ok, planeErr(err)
	}
	return ui.ProviderMetrics{At: m.Time, CPUCount: m.CPUCount, CPUPct: m.CPUUsedPct, MemUsed: m.MemUsed, MemTotal: m.MemTotal}, true, nil
}

func (p e2bProvider) Logs(ctx context.Context, limit int) ([]ui.ProviderLogLine, error) {
	entries, err := p.f.c.Logs(ctx, p.id, min(max(limit, 1), e2b.MaxLogLines))
	if err != nil {
		return nil, planeErr(err)
	}
	out := make([]ui.ProviderLogLine, len(entries))
	for i, e := range entries {
		out[i] = ui.ProviderLogLine{At: e.Time, Level: e.Level, Message: e.Message}
	}
	return out, nil
}

func (p e2bProvider) Resume(ctx context.Context, timeout time.Duration) error {
	_, err := p.f.c.Resume(ctx, p.id, timeout)
	p.f.acted(p.id)
	return planeErr(err)
}

func (p e2bProvider) Extend(ctx context.Context, timeout time.Duration) error {
	err := p.f.c.Extend(ctx, p.id, timeout)
	p.f.acted(p.id)
	return planeErr(err)
}

// Backoff is ui.PlaneBackoff: the fleet's.
func (p e2bProvider) Backoff() (time.Duration, string) { return p.f.Backoff() }

// BackoffOwner is ui.SharedBackoff: every sandbox of a fleet shares it.
func (p e2bProvider) BackoffOwner() ui.ProviderBackoff { return p.f }

func planeInfo(sb e2b.Sandbox) ui.ProviderInfo {
	return ui.ProviderInfo{ID: sb.ID, Template: sb.TemplateID, Alias: sb.Alias, State: sb.State,
		StartedAt: sb.StartedAt, EndAt: sb.EndAt, Metadata: sb.Metadata}
}
