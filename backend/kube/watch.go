package kube

import (
	"context"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Watcher keeps the cluster's daemon pods up to date: one listing, then a
// watch from it (pods come, change phase and go), listed again whenever
// the watch ends or fails. Get answers from what it holds, without a
// request, so a TUI of many pods asks the API server nothing per pod.
type Watcher struct {
	c *Cluster

	mu     sync.Mutex
	pods   map[string]Pod // by Ref
	synced bool           // a listing has been applied
	err    error          // the last listing's or watch's failure, until one succeeds
	change chan struct{}  // closed and replaced on every change (for tests and waiters)
}

// watchRetry is how long a failed listing waits before the next.
const watchRetry = 2 * time.Second

// NewWatcher is a watcher of c's selection; Run feeds it.
func NewWatcher(c *Cluster) *Watcher {
	return &Watcher{c: c, pods: map[string]Pod{}, change: make(chan struct{})}
}

// Seed sets what a listing already said, before Run's own.
func (w *Watcher) Seed(pods []Pod) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range pods {
		w.pods[p.Ref()] = p
	}
	w.synced = true
	w.changed()
}

// Get is the pod named ref (kube:NS/POD) as last seen; known is false
// while nothing was listed yet or the last attempt failed (err says why).
func (w *Watcher) Get(ref string) (p Pod, found, known bool, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p, found = w.pods[ref]
	return p, found, w.synced && w.err == nil, w.err
}

// Pods is every pod as last seen, by Ref; take Changed first to wait for
// what comes after.
func (w *Watcher) Pods() []Pod {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]Pod, 0, len(w.pods))
	for _, p := range w.pods {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Ref() < out[j].Ref() })
	return out
}

// Changed is closed at the next change.
func (w *Watcher) Changed() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.change
}

// changed wakes waiters; mu is held.
func (w *Watcher) changed() {
	close(w.change)
	w.change = make(chan struct{})
}

// Run lists and watches until ctx ends.
func (w *Watcher) Run(ctx context.Context) {
	for ctx.Err() == nil {
		rv, err := w.relist(ctx)
		if err == nil {
			err = w.follow(ctx, rv)
		}
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			w.mu.Lock()
			w.err = err
			w.changed()
			w.mu.Unlock()
			select {
			case <-ctx.Done():
				return
			case <-time.After(watchRetry):
			}
		}
	}
}

// relist replaces the pods with a fresh listing; it returns the listing's
// resource version, where the watch starts.
func (w *Watcher) relist(ctx context.Context) (string, error) {
	list, err := w.c.core.listPods(ctx, w.c.namespace, metav1.ListOptions{LabelSelector: w.c.selector.String()})
	if err != nil {
		return "", w.c.apiErr("list pods", w.c.namespace, err)
	}
	next := map[string]Pod{}
	for i := range list.Items {
		if p, ok := FromPod(&list.Items[i]); ok {
			next[p.Ref()] = p
		}
	}
	w.mu.Lock()
	w.pods, w.synced, w.err = next, true, nil
	w.changed()
	w.mu.Unlock()
	return list.ResourceVersion, nil
}

// follow applies the watch's events until it ends; nil means it ended
// normally (the API server closes watches now and then) and a new
// listing is due.
func (w *Watcher) follow(ctx context.Context, rv string) error {
	wi, err := w.c.core.watchPods(ctx, w.c.namespace, metav1.ListOptions{
		LabelSelector: w.c.selector.String(), ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err != nil {
		return w.c.apiErr("watch pods", w.c.namespace, err)
	}
	defer wi.Stop()
	for ev := range wi.ResultChan() {
		pod, ok := ev.Object.(*corev1.Pod)
		switch {
		case ev.Type == watch.Error:
			return nil // expired resource version and the like: list again
		case !ok || ev.Type == watch.Bookmark:
			continue
		}
		p, daemon := FromPod(pod)
		ref := NamePrefix + pod.Namespace + "/" + pod.Name
		w.mu.Lock()
		if ev.Type == watch.Deleted || !daemon {
			delete(w.pods, ref)
		} else {
			w.pods[ref] = p
		}
		w.changed()
		w.mu.Unlock()
	}
	return nil
}
