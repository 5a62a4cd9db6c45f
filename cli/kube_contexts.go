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
	"sandtop/ui"
	"sandtop/uisource"
)

// The TUI's view of Kubernetes pods, as of E2B sandboxes: one listing
// makes a context per daemon pod, none dialled until shown; a watch on the
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

// kubeContexts lists the selection's pods once and makes a context of
// each; a failure is one context in error, tried again when picked.
func (o *tuiOpener) kubeContexts(ctx context.Context, sel selection) []ui.Context {
	fail := func(err error) []ui.Context {
		return []ui.Context{{Name: sel.name, Kind: selKind(sel), Target: selWhere(sel), Err: err, ReadOnly: sel.readOnly, Open: o.retry(sel)}}
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
	o.startWatch(f.w)
	out := make([]ui.Context, 0, len(pods))
	for _, p := range pods {
		t := target.KubeTarget(cl, cfg, p)
		c := ui.Context{Name: t.Name, Kind: string(target.KindKube), ReadOnly: sel.readOnly, Cwd: contextCwd(sel, t),
			Target: fmt.Sprintf("pod %s/%s on %s", p.Namespace, p.Name, p.Node)}
		o.kubeContext(&c, f, p)
		out = append(out, c)
	}
	return out
}

// startWatch runs w until the TUI closes.
func (o *tuiOpener) startWatch(w *kube.Watcher) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	o.mu.Lock()
	o.stops = append(o.stops, func() { cancel(); <-done })
	o.mu.Unlock()
}

// kubeContext gives c its plane (the pod as the watch sees it), its Open
// and its Summary, both over a pooled connection through the pod proxy.
func (o *tuiOpener) kubeContext(c *ui.Context, f *kubeFleet, p kube.Pod) {
	c.Plane, c.PlaneInfo = kubePlane{f: f, pod: p}, kubePlaneInfo(p)
	cwd := c.Cwd
	c.Open = func(ctx context.Context) (ui.Source, error) {
		s, release, err := o.kubeSession(ctx, f, p, true)
		if err != nil {
			return nil, err
		}
		release(false) // pinned: it stays open while the TUI runs
		return uisource.New(s.Runtime, uisource.Options{Name: p.Ref(), Target: c.Target, Cwd: cwd, Grace: o.cfg.Grace, Stuck: o.stuckRules()})
	}
	c.Summary = func(ctx context.Context) (ui.Snapshot, error) {
		s, release, err := o.kubeSession(ctx, f, p, false)
		if err != nil {
			return ui.Snapshot{}, err
		}
		snap, err := uisource.Summary(ctx, s.Runtime, o.stuckRules())
		release(err != nil)
		return snap, err
	}
}

// kubeSession borrows p's session from the pool, dialling it (with its
// token, read once) through the pod proxy if there is none.
func (o *tuiOpener) kubeSession(ctx context.Context, f *kubeFleet, p kube.Pod, pin bool) (*target.Session, func(bool), error) {
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return nil, nil, errors.New("the TUI is closing")
	}
	if o.pool == nil {
		o.pool = newEnvdPool(poolMax, poolIdle)
	}
	pool := o.pool
	o.mu.Unlock()
	return pool.acquire(ctx, p.Ref(), pin, func(ctx context.Context) (*target.Session, error) {
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
		return target.Open(c, t, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: contextCwdOf(t), Logger: o.log})
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

// kubePlane shows a pod as the watch last saw it. A pod is never paused,
// resumed or extended; one the API server no longer has is gone.
type kubePlane struct {
	f   *kubeFleet
	pod kube.Pod
}

func (p kubePlane) Describe(context.Context) (ui.PlaneInfo, error) {
	now, found, known, err := p.f.w.Get(p.pod.Ref())
	switch {
	case known && !found:
		return ui.PlaneInfo{}, fmt.Errorf("%w: pod %s/%s was deleted", ui.ErrSandboxGone, p.pod.Namespace, p.pod.Name)
	case known && now.UID != p.pod.UID:
		return ui.PlaneInfo{}, fmt.Errorf("%w: pod %s/%s was replaced by a new pod of that name", ui.ErrSandboxGone, p.pod.Namespace, p.pod.Name)
	case found:
		return kubePlaneInfo(now), nil
	case err != nil:
		return ui.PlaneInfo{}, err
	}
	return kubePlaneInfo(p.pod), nil
}

func (kubePlane) Metrics(context.Context) (ui.PlaneMetrics, bool, error) {
	return ui.PlaneMetrics{}, false, nil
}

func (kubePlane) Logs(context.Context, int) ([]ui.PlaneLogLine, error) {
	return nil, errors.New("a pod's own log is kubectl logs' job; sandtop shows its processes' output")
}

func (kubePlane) Resume(context.Context, time.Duration) error {
	return errors.New("a Kubernetes pod cannot be paused or resumed")
}

func (kubePlane) Extend(context.Context, time.Duration) error {
	return errors.New("a Kubernetes pod has no end time to extend")
}

func (kubePlane) DefaultTimeout() time.Duration { return 0 }

// kubePlaneInfo is a pod as the TUI's header and fleet filter show it:
// its node where E2B shows a template, its phase, namespace and node.
func kubePlaneInfo(p kube.Pod) ui.PlaneInfo {
	md := map[string]string{"namespace": p.Namespace, "node": p.Node, "phase": p.Phase}
	if p.Deleting {
		md["deleting"] = "true"
	}
	return ui.PlaneInfo{ID: p.Namespace + "/" + p.Name, Template: "node " + p.Node, State: strings.ToLower(p.Phase),
		StartedAt: p.Created, Metadata: md}
}
