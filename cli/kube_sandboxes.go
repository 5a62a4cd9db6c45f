package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"sandtop/backend/kube"
	"sandtop/backend/seam"
	"sandtop/backend/target"
	"sandtop/config"
	"sandtop/sandbox"
	"sandtop/ui"
	"sandtop/uisource"
)

// The TUI's view of Kubernetes pods, as of E2B sandboxes: one listing
// makes a sandbox per daemon pod, none dialled until shown; a watch on the
// API server keeps each pod's phase (and its going) current, so the fleet
// view asks nothing per pod but its counts, over the pool of connections.

// kubeFleet is one --kube selection's cluster, watched.
type kubeFleet struct {
	cl  *kube.Cluster
	w   *kube.Watcher
	cfg target.Config

	mu     sync.Mutex
	tokens map[string]string // by pod UID: a pod's Secret is read once
}

// kubeSpecs lists the selection's pods once and makes a sandbox of
// each; a failure, or finding none, is one sandbox in error, tried again
// when picked.
func (o *tuiOpener) kubeSpecs(ctx context.Context, sel selection) []ui.SandboxSpec {
	fail := func(err error) []ui.SandboxSpec {
		return []ui.SandboxSpec{{Name: sel.name, Kind: selKind(sel), Target: selWhere(sel), Err: err, ReadOnly: sel.readOnly, Open: o.retry(sel)}}
	}
	cfg := sel.cfg
	if cfg.TokenFile != "" {
		tok, err := config.ReadTokenFile(cfg.TokenFile)
		if err != nil {
			return fail(err)
		}
		cfg.Token = tok
	}
	cl, err := kube.Connect(*cfg.Kube)
	if err != nil {
		return fail(err)
	}
	var pods []kube.Pod
	if cfg.KubePod != "" {
		ns, name, perr := kube.ParseRef(cfg.KubePod, cl.DefaultNamespace())
		if perr != nil {
			return fail(perr)
		}
		p, gerr := cl.Get(ctx, ns, name)
		if gerr != nil {
			return fail(gerr)
		}
		pods = []kube.Pod{p}
	} else if pods, err = cl.List(ctx); err != nil {
		return fail(err)
	}
	f := &kubeFleet{cl: cl, w: kube.NewWatcher(cl), cfg: cfg, tokens: map[string]string{}}
	f.w.Seed(pods)
	var announce func(context.Context)
	if cfg.KubePod == "" {
		// A selection, not one pod: the pods it gains are shown too.
		out := o.arrivalsChan()
		announce = func(ctx context.Context) { o.announce(ctx, out, f, sel, pods) }
	}
	o.startWatch(f.w, announce)
	if len(pods) == 0 {
		// Alone, this is the TUI's error; beside other targets, a row
		// that says where no pod was found (the ones created later
		// still come).
		return fail(noPodErr(cfg.Kube))
	}
	out := make([]ui.SandboxSpec, 0, len(pods))
	for _, p := range pods {
		out = append(out, o.podSpec(f, sel, p))
	}
	return out
}

// podSpec is p as a sandbox of the fleet f.
func (o *tuiOpener) podSpec(f *kubeFleet, sel selection, p kube.Pod) ui.SandboxSpec {
	t := target.KubeTarget(f.cl, f.cfg, p)
	c := ui.SandboxSpec{Name: t.Name, Kind: string(target.KindKube), ReadOnly: sel.readOnly, Cwd: contextCwd(sel, t),
		Target: fmt.Sprintf("pod %s/%s on %s", p.Namespace, p.Name, p.Node)}
	o.fillKube(&c, f, p)
	return c
}

// startWatch runs w, and announce beside it when set, until the TUI
// closes.
func (o *tuiOpener) startWatch(w *kube.Watcher, announce func(context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); w.Run(ctx) }()
	if announce != nil {
		wg.Add(1)
		go func() { defer wg.Done(); announce(ctx) }()
	}
	o.mu.Lock()
	o.stops = append(o.stops, func() { cancel(); wg.Wait() })
	o.mu.Unlock()
}

// announced is what the TUI reads as ui.Options.Arrivals: nil when no
// selection can announce a sandbox.
func (o *tuiOpener) announced() <-chan ui.SandboxSpec {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.arrivals
}

// arrivalsChan is where the TUI learns of sandboxes that appear while it
// runs (ui.Options.Arrivals), made by the first that may announce one.
func (o *tuiOpener) arrivalsChan() chan ui.SandboxSpec {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.arrivals == nil {
		o.arrivals = make(chan ui.SandboxSpec, 16)
	}
	return o.arrivals
}

// announce gives the TUI (out), until ctx ends, a sandbox for every pod
// of f's watch it was not shown yet: a pod created after start, or one
// re-created under the name of one shown (a new UID), which the TUI puts
// in the old one's place once that one is gone. A pod already terminating
// is not announced.
func (o *tuiOpener) announce(ctx context.Context, out chan<- ui.SandboxSpec, f *kubeFleet, sel selection, shown []kube.Pod) {
	seen := map[string]string{} // UID by Ref
	for _, p := range shown {
		seen[p.Ref()] = p.UID
	}
	for {
		changed := f.w.Changed()
		for _, p := range f.w.Pods() {
			if seen[p.Ref()] == p.UID || p.Deleting {
				continue
			}
			seen[p.Ref()] = p.UID
			select {
			case out <- o.podSpec(f, sel, p):
			case <-ctx.Done():
				return
			}
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// fillKube gives c its plane (the pod as the watch sees it), its Open
// and its Summary, both over a pooled connection through the pod proxy.
func (o *tuiOpener) fillKube(c *ui.SandboxSpec, f *kubeFleet, p kube.Pod) {
	c.Provider, c.ProviderInfo = kubeProvider{f: f, pod: p}, kubeProviderInfo(p)
	cwd := c.Cwd
	c.Open = func(ctx context.Context) (ui.Source, error) {
		s, release, err := o.kubeConnection(ctx, f, p, true)
		if err != nil {
			return nil, err
		}
		release(false) // pinned: it stays open while the TUI runs
		return uisource.New(s.Runtime, uisource.Options{Name: p.Ref(), Target: c.Target, Cwd: cwd, Grace: o.cfg.Grace, Stuck: o.stuckRules()})
	}
	c.Summary = func(ctx context.Context) (sandbox.Snapshot, error) {
		s, release, err := o.kubeConnection(ctx, f, p, false)
		if err != nil {
			return sandbox.Snapshot{}, err
		}
		snap, err := uisource.Summary(ctx, s.Runtime, o.stuckRules())
		release(err != nil)
		return snap, err
	}
}

// kubeConnection borrows p's connection from the pool, dialling it (with its
// token, read once) through the pod proxy if there is none.
func (o *tuiOpener) kubeConnection(ctx context.Context, f *kubeFleet, p kube.Pod, pin bool) (*target.Connection, func(bool), error) {
	pool, err := o.connections()
	if err != nil {
		return nil, nil, err
	}
	// Keyed by UID too: a pod re-created under its name is another
	// daemon, never handed the old one's connection.
	return pool.acquire(ctx, p.Ref()+" "+p.UID, pin, func(ctx context.Context) (*target.Connection, error) {
		now, found, known, werr := f.w.Get(p.Ref())
		switch {
		case known && (!found || now.UID != p.UID):
			return nil, fmt.Errorf("pod %s/%s: %w", p.Namespace, p.Name, kube.ErrPodGone)
		case found:
			p = now
		case werr != nil:
			return nil, werr
		}
		if err := p.Reachable(); err != nil {
			return nil, err
		}
		t, err := f.target(ctx, p)
		if err != nil {
			return nil, err
		}
		c, cancel := context.WithTimeout(ctx, openTimeout)
		defer cancel()
		return target.Open(c, t, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: cwdOf(t), Logger: o.log})
	})
}

// target is p as a target with its token: the selection's, else p's
// Secret, read once per pod.
func (f *kubeFleet) target(ctx context.Context, p kube.Pod) (target.Target, error) {
	t := target.KubeTarget(f.cl, f.cfg, p)
	t.Token = f.cfg.Token
	if t.Token != "" {
		return t, nil
	}
	f.mu.Lock()
	tok, ok := f.tokens[p.UID]
	f.mu.Unlock()
	if ok {
		t.Token = tok
		return t, nil
	}
	t, err := target.KubeToken(ctx, t, "")
	if err != nil {
		return t, err
	}
	f.mu.Lock()
	f.tokens[p.UID] = t.Token
	f.mu.Unlock()
	return t, nil
}

// kubeProvider shows a pod as the watch last saw it. A pod is never paused,
// resumed or extended; one the API server no longer has is gone.
type kubeProvider struct {
	f   *kubeFleet
	pod kube.Pod
}

func (p kubeProvider) Describe(context.Context) (ui.ProviderInfo, error) {
	now, found, known, err := p.f.w.Get(p.pod.Ref())
	switch {
	case known && !found:
		return ui.ProviderInfo{}, fmt.Errorf("%w: pod %s/%s was deleted", ui.ErrSandboxGone, p.pod.Namespace, p.pod.Name)
	case known && now.UID != p.pod.UID:
		return ui.ProviderInfo{}, fmt.Errorf("%w: pod %s/%s was replaced by a new pod of that name", ui.ErrSandboxGone, p.pod.Namespace, p.pod.Name)
	case found:
		return kubeProviderInfo(now), nil
	case err != nil:
		return ui.ProviderInfo{}, err
	}
	return kubeProviderInfo(p.pod), nil
}

func (kubeProvider) Metrics(context.Context) (ui.ProviderMetrics, bool, error) {
	return ui.ProviderMetrics{}, false, nil
}

func (kubeProvider) Logs(context.Context, int) ([]ui.ProviderLogLine, error) {
	return nil, errors.New("a pod's own log is kubectl logs' job; sandtop shows its processes' output")
}

func (kubeProvider) Resume(context.Context, time.Duration) error {
	return errors.New("a Kubernetes pod cannot be paused or resumed")
}

func (kubeProvider) Extend(context.Context, time.Duration) error {
	return errors.New("a Kubernetes pod has no end time to extend")
}

func (kubeProvider) DefaultTimeout() time.Duration { return 0 }

// kubeProviderInfo is a pod as the TUI's header and fleet filter show it:
// its node where E2B shows a template, its phase, namespace and node.
func kubeProviderInfo(p kube.Pod) ui.ProviderInfo {
	md := map[string]string{"namespace": p.Namespace, "node": p.Node, "phase": p.Phase}
	if p.Deleting {
		md["deleting"] = "true"
	}
	return ui.ProviderInfo{ID: p.Namespace + "/" + p.Name, Template: "node " + p.Node, State: strings.ToLower(p.Phase),
		StartedAt: p.Created, Metadata: md}
}
