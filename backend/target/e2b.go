package target

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"

	"sandtop/backend/e2b"
)

// E2B sandboxes, found and described without side effects: the listing
// (GET /v2/sandboxes) and each sandbox's detail (GET /sandboxes/{id}) give
// the envd address and token. Nothing here resumes a sandbox or moves its
// end time; that is e2b.Client.Resume and Extend, explicit actions.

// ErrPaused is wrapped by the Err of a paused sandbox's target: it is
// listed, but never dialled (traffic could wake it) until it is resumed.
var ErrPaused = errors.New("paused")

// e2bDescribeParallel bounds concurrent detail requests for a whole team.
const e2bDescribeParallel = 4

// E2BClient builds the control-plane client for cfg: the fields set in
// cfg.E2BConfig, the rest from the environment. A key of an unusual shape
// is used, with a warning through cfg.Warn.
func E2BClient(cfg Config) (*e2b.Client, error) {
	ecfg := e2b.ConfigFromEnv(cfg.Getenv)
	own := cfg.E2BConfig
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&ecfg.APIKey, own.APIKey}, {&ecfg.Domain, own.Domain}, {&ecfg.APIURL, own.APIURL}, {&ecfg.SandboxURL, own.SandboxURL},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	ecfg.Debug = ecfg.Debug || own.Debug
	ecfg.HTTPClient, ecfg.EnvdURLFor, ecfg.ConnectTimeout = own.HTTPClient, own.EnvdURLFor, own.ConnectTimeout
	client, err := e2b.NewClient(ecfg)
	if err != nil {
		return nil, err
	}
	if w := e2b.KeyWarning(ecfg.APIKey); w != "" && cfg.Warn != nil {
		cfg.Warn(w)
	}
	return client, nil
}

func e2bTargets(ctx context.Context, cfg Config) ([]Target, error) {
	client, err := E2BClient(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.E2BSandboxID != "" {
		t := describeTarget(ctx, client, cfg, cfg.E2BSandboxID)
		if t.Err != nil && !errors.Is(t.Err, ErrPaused) {
			return nil, t.Err
		}
		return []Target{t}, nil
	}
	sandboxes, err := client.List(ctx, e2b.ListOptions{Metadata: cfg.E2BMetadata})
	if err != nil {
		return nil, err
	}
	out := make([]Target, len(sandboxes))
	sem := make(chan struct{}, e2bDescribeParallel)
	var wg sync.WaitGroup
	for i, sb := range sandboxes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = describeTarget(ctx, client, cfg, sb.ID)
		})
	}
	wg.Wait()
	// A sandbox that went away between list and describe is simply not there.
	kept := out[:0]
	for _, t := range out {
		if !errors.Is(t.Err, e2b.ErrSandboxGone) {
			kept = append(kept, t)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].SandboxID < kept[j].SandboxID })
	return kept, nil
}

// describeTarget reads one sandbox's detail. A paused sandbox gets no
// endpoint and an Err wrapping ErrPaused.
func describeTarget(ctx context.Context, client *e2b.Client, cfg Config, id string) Target {
	t := e2bLayout(cfg, id)
	t.e2b = client
	sb, conn, err := client.Describe(ctx, id)
	if err != nil {
		t.Err = err
		return t
	}
	return withDetail(t, sb, conn)
}

// e2bLayout is an E2B target before the control plane answered: its name,
// user, routing headers and layout (the user's home, sandtop's state under
// ~/.local/state/sandtop, never the agent's workspace).
func e2bLayout(cfg Config, id string) Target {
	user := cfg.User
	if user == "" {
		user = e2b.DefaultUser
	}
	t := Target{
		Name:           "e2b:" + id,
		Kind:           KindE2B,
		User:           user,
		Headers:        e2b.SandboxHeaders(id),
		SandboxID:      id,
		AgentWorkspace: cfg.AgentWorkspace,
		RuntimeRoot:    cfg.RuntimeRoot,
		Cwd:            cfg.Cwd,
	}
	if t.AgentWorkspace == "" {
		t.AgentWorkspace = e2b.Home(user)
	}
	if t.RuntimeRoot == "" {
		t.RuntimeRoot = e2b.StateDir(user)
	}
	if t.Cwd == "" {
		t.Cwd = t.AgentWorkspace
	}
	return t
}

func withDetail(t Target, sb e2b.Sandbox, conn e2b.Connection) Target {
	t.E2B = &sb
	t.EnvdVersion = sb.EnvdVersion
	t.Err, t.Endpoint, t.Token, t.conn = nil, "", "", e2b.Connection{}
	if sb.Paused() {
		t.Err = fmt.Errorf("e2b: sandbox %s is %w: nothing runs in it until it is resumed (sandtop e2b resume %s)", sb.ID, ErrPaused, sb.ID)
		return t
	}
	t.conn = conn
	t.Endpoint = conn.EnvdURL
	t.Token = conn.AccessToken
	return t
}

// Refresh describes an E2B target again (GET /sandboxes/{id}, no side
// effect): its state and end time, and, once it runs, a fresh envd
// address and token. Other targets are returned as they are.
func Refresh(ctx context.Context, t Target) (Target, error) {
	if t.e2b == nil {
		return t, nil
	}
	sb, conn, err := t.e2b.Describe(ctx, t.SandboxID)
	if err != nil {
		return t, err
	}
	return withDetail(t, sb, conn), nil
}

// Provider is the E2B client that knows this target's sandbox (nil for
// other kinds): for its metrics, logs, and the explicit resume and extend.
func (t Target) Provider() *e2b.Client { return t.e2b }
