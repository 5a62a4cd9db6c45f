package target

import (
	"context"
	"errors"
	"fmt"

	"sandtop/backend/e2b"
	"sandtop/backend/kube"
	"sandtop/config"
)

// Kubernetes pods that run sandtop's daemon, found through the API server
// (package kube) and reached through its pod proxy. Listing never dials a
// daemon; a pod that is not running is listed with an Err wrapping
// kube.ErrNotRunning.

// kubeTargets lists the selection's pods, or the one pod cfg.KubePod names.
func kubeTargets(ctx context.Context, cfg Config) ([]Target, error) {
	cl, err := kube.Connect(*cfg.Kube)
	if err != nil {
		return nil, err
	}
	var pods []kube.Pod
	if cfg.KubePod != "" {
		ns, name, err := kube.ParseRef(cfg.KubePod, cl.DefaultNamespace())
		if err != nil {
			return nil, err
		}
		p, err := cl.Get(ctx, ns, name)
		if err != nil {
			return nil, err
		}
		pods = []kube.Pod{p}
	} else if pods, err = cl.List(ctx); err != nil {
		return nil, err
	}
	var fileToken string
	if cfg.TokenFile != "" {
		if fileToken, err = config.ReadTokenFile(cfg.TokenFile); err != nil {
			return nil, err
		}
	}
	// Pods of a namespace share their Secret: each is read once.
	type read struct {
		token string
		err   error
	}
	secrets := map[string]read{}
	out := make([]Target, 0, len(pods))
	for _, p := range pods {
		t := KubeTarget(cl, cfg, p)
		if t.Err == nil {
			t.Token = fileToken
			if t.Token == "" {
				key := p.Namespace + "/" + cfg.Kube.TokenSecret + "/" + p.TokenSecret
				r, ok := secrets[key]
				if !ok {
					if r.token, r.err = cl.Token(ctx, p); r.err == nil {
						secrets[key] = r // an error names its pod: asked again
					}
				}
				t.Token, t.Err = r.token, r.err
			}
		}
		out = append(out, t)
	}
	return out, nil
}

// KubeTarget is pod p as a target, without its token (see KubeToken): its
// name (kube:NAMESPACE/POD), endpoint and the API server's HTTP client.
func KubeTarget(cl *kube.Cluster, cfg Config, p kube.Pod) Target {
	pod := p
	t := Target{
		Name:           p.Ref(),
		Kind:           KindKube,
		Endpoint:       cl.Endpoint(p),
		HTTPClient:     cl.HTTPClient(),
		CAFile:         cfg.CAFile,
		Kube:           &pod,
		Cwd:            cfg.Cwd,
		RuntimeRoot:    cfg.RuntimeRoot,
		AgentWorkspace: cfg.AgentWorkspace,
		kube:           cl,
	}
	if t.AgentWorkspace == "" {
		t.AgentWorkspace = t.Cwd
	}
	t.Err = p.Reachable()
	return t
}

// KubeToken reads t's token (the operator's token file wins, read by the
// caller into fileToken, else the Secret). Non-kube targets keep theirs.
func KubeToken(ctx context.Context, t Target, fileToken string) (Target, error) {
	if t.kube == nil || t.Kube == nil {
		return t, nil
	}
	if fileToken != "" {
		t.Token = fileToken
		return t, nil
	}
	tok, err := t.kube.Token(ctx, *t.Kube)
	if err != nil {
		return t, err
	}
	t.Token = tok
	return t, nil
}

// Cluster is the API server that knows this pod (nil for other kinds).
func (t Target) Cluster() *kube.Cluster { return t.kube }

// kubeProbe says whether t's pod is still there: gone once the API server
// no longer has it (or has another pod of that name).
func kubeProbe(ctx context.Context, t Target) (e2b.Liveness, error) {
	err := t.kube.Probe(ctx, *t.Kube)
	switch {
	case err == nil:
		return e2b.Alive, nil
	case errors.Is(err, kube.ErrPodGone):
		return e2b.Gone, err
	}
	return e2b.Unreachable, fmt.Errorf("target %s: %w", t.Name, err)
}
