package target

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"sync"

	"sandtop/backend/envd"
)

// Config is what the operator asked for. Several sources may be combined;
// the result lists local first, then --envd, then E2B sandboxes by id.
type Config struct {
	// Local is the embedded daemon's dial target ("unix:<socket>"), given by
	// the CLI once the daemon runs; empty leaves the local sandbox out.
	Local string

	// EnvdURL is --envd: any envd-compatible endpoint (http or https).
	EnvdURL string
	// TokenFile is --token-file: a file holding the endpoint's access token.
	TokenFile string
	// Token is an access token already in hand; TokenFile wins over it.
	Token string
	// User picks the sandbox user on --envd and E2B targets; empty means
	// E2B's default user "user".
	User string
	// Cwd, RuntimeRoot and AgentWorkspace override the layout hints of
	// --envd and unix-socket targets.
	Cwd, RuntimeRoot, AgentWorkspace string

	// E2B is --e2b: every running sandbox of the team, or only E2BSandboxID.
	E2B          bool
	E2BSandboxID string
	// E2BConfig is the control-plane configuration; when its APIKey is
	// empty it is read from the environment (through Getenv) instead.
	E2BConfig envd.E2BConfig
	// Getenv reads E2B_* variables; nil means os.Getenv.
	Getenv func(string) string
}

// e2bConnectParallel bounds concurrent connects when listing a whole team.
const e2bConnectParallel = 4

// ListTargets resolves cfg into targets. An error means nothing usable
// could be listed (a rejected API key, an unreadable token file); a single
// E2B sandbox that cannot be connected is listed with Target.Err set.
// A team with no running sandbox gives an empty list, not an error.
func ListTargets(ctx context.Context, cfg Config) ([]Target, error) {
	if cfg.Local == "" && cfg.EnvdURL == "" && !cfg.E2B && cfg.E2BSandboxID == "" {
		return nil, errors.New("target: nothing to connect to: no local sandbox, --envd or --e2b")
	}
	out := []Target{}
	if cfg.Local != "" {
		out = append(out, Target{Name: "local", Kind: KindLocal, Endpoint: cfg.Local,
			RuntimeRoot: cfg.RuntimeRoot, AgentWorkspace: cfg.AgentWorkspace})
	}
	if cfg.EnvdURL != "" {
		t, err := envdTarget(cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if cfg.E2B || cfg.E2BSandboxID != "" {
		ts, err := e2bTargets(ctx, cfg)
		if err != nil {
			return nil, err
		}
		out = append(out, ts...)
	}
	return out, nil
}

func envdTarget(cfg Config) (Target, error) {
	u, err := url.Parse(cfg.EnvdURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Target{}, fmt.Errorf("target: --envd %q is not an http(s) URL", redactURL(cfg.EnvdURL))
	}
	if u.User != nil {
		return Target{}, errors.New("target: --envd URL carries credentials; put the token in --token-file instead")
	}
	token := cfg.Token
	if cfg.TokenFile != "" {
		if token, err = readToken(cfg.TokenFile); err != nil {
			return Target{}, err
		}
	}
	t := Target{
		Name:           "envd:" + u.Host,
		Kind:           KindEnvd,
		Endpoint:       strings.TrimRight(u.String(), "/"),
		Token:          token,
		User:           cfg.User,
		Cwd:            cfg.Cwd,
		RuntimeRoot:    cfg.RuntimeRoot,
		AgentWorkspace: cfg.AgentWorkspace,
	}
	return t, nil
}

// readToken reads a token file: surrounding whitespace is dropped, and an
// empty file is an error rather than an unauthenticated connection.
func readToken(file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("target: --token-file: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("target: --token-file %s is empty", file)
	}
	if strings.ContainsAny(tok, "\r\n") {
		return "", fmt.Errorf("target: --token-file %s holds more than one line", file)
	}
	return tok, nil
}

// redactURL keeps a URL's scheme and host only, for error messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable)"
	}
	return u.Scheme + "://" + u.Host
}

func e2bTargets(ctx context.Context, cfg Config) ([]Target, error) {
	ecfg := cfg.E2BConfig
	if ecfg.APIKey == "" {
		fromEnv := envd.E2BConfigFromEnv(cfg.Getenv)
		fromEnv.HTTPClient, fromEnv.EnvdURLFor, fromEnv.ConnectTimeout = ecfg.HTTPClient, ecfg.EnvdURLFor, ecfg.ConnectTimeout
		ecfg = fromEnv
	}
	client, err := envd.NewE2BClient(ecfg)
	if err != nil {
		return nil, err
	}
	if cfg.E2BSandboxID != "" {
		t := connectTarget(ctx, client, cfg.User, cfg.E2BSandboxID)
		if t.Err != nil {
			return nil, t.Err
		}
		return []Target{t}, nil
	}
	sandboxes, err := client.ListRunning(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Target, len(sandboxes))
	sem := make(chan struct{}, e2bConnectParallel)
	var wg sync.WaitGroup
	for i, sb := range sandboxes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = connectTarget(ctx, client, cfg.User, sb.ID)
		})
	}
	wg.Wait()
	// A sandbox that went away between list and connect is simply not there.
	kept := out[:0]
	for _, t := range out {
		if !errors.Is(t.Err, envd.ErrE2BSandboxGone) {
			kept = append(kept, t)
		}
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].SandboxID < kept[j].SandboxID })
	return kept, nil
}

// connectTarget asks the control plane for one sandbox's envd credentials.
func connectTarget(ctx context.Context, client *envd.E2BClient, user, id string) Target {
	if user == "" {
		user = envd.E2BDefaultUser
	}
	t := Target{
		Name:           "e2b:" + id,
		Kind:           KindE2B,
		User:           user,
		Headers:        envd.E2BSandboxHeaders(id),
		Cwd:            envd.E2BDefaultCwd,
		RuntimeRoot:    path.Join(envd.E2BDefaultCwd, ".sandtop"),
		AgentWorkspace: envd.E2BDefaultCwd,
		SandboxID:      id,
		e2b:            client,
	}
	conn, err := client.Connect(ctx, id)
	if err != nil {
		t.Err = err
		return t
	}
	t.conn = conn
	t.Endpoint = conn.EnvdURL
	t.Token = conn.AccessToken
	t.EnvdVersion = conn.EnvdVersion
	return t
}
