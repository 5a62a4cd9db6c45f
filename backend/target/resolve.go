package target

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"sandtop/backend/e2b"
	"sandtop/backend/kube"
	"sandtop/config"
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
	// CAFile is --ca-file: the CA of an https daemon's own certificate
	// (--envd https://..., --kube-direct to pods serving TLS).
	CAFile string
	// User picks the sandbox user on --envd and E2B targets; empty means
	// E2B's default user "user".
	User string
	// Cwd, RuntimeRoot and AgentWorkspace override the layout hints of
	// --envd and E2B targets (see Target). On E2B they default to the
	// sandbox user's home, ~/.local/state/sandtop and the home.
	Cwd, RuntimeRoot, AgentWorkspace string

	// E2B is --e2b: every sandbox of the team (running and paused), or only
	// E2BSandboxID. E2BMetadata keeps those whose metadata has every pair.
	E2B          bool
	E2BSandboxID string
	E2BMetadata  map[string]string
	// E2BConfig is the control-plane configuration; its empty fields are
	// read from the environment (through Getenv).
	E2BConfig e2b.Config
	// Kube is --kube: the pods that run sandtop's daemon, found through
	// the API server; KubePod instead names one (POD, NAMESPACE/POD or
	// kube:NAMESPACE/POD). TokenFile, when set, holds their daemons'
	// token; otherwise it is read from a Secret (kube.Options).
	Kube    *kube.Options
	KubePod string

	// Getenv reads E2B_* variables; nil means os.Getenv.
	Getenv func(string) string
	// Warn receives one-line warnings (an API key of an unusual shape);
	// nil drops them.
	Warn func(string)
}

// ListTargets resolves cfg into targets. An error means nothing usable
// could be listed (a rejected API key, an unreadable token file); a single
// E2B sandbox that cannot be described is listed with Target.Err set, and
// a paused one with an Err wrapping ErrPaused. A team with no sandbox gives
// an empty list, not an error.
func ListTargets(ctx context.Context, cfg Config) ([]Target, error) {
	if cfg.Local == "" && cfg.EnvdURL == "" && !cfg.E2B && cfg.E2BSandboxID == "" && cfg.Kube == nil {
		return nil, errors.New("target: nothing to connect to: no local sandbox, --envd, --e2b or --kube")
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
	if cfg.Kube != nil {
		ts, err := kubeTargets(ctx, cfg)
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
		return Target{}, fmt.Errorf("target: --envd %q is not an http(s) URL", RedactURL(cfg.EnvdURL))
	}
	if u.User != nil {
		return Target{}, errors.New("target: --envd URL carries credentials; put the token in --token-file instead")
	}
	token := cfg.Token
	if cfg.TokenFile != "" && cfg.Kube == nil {
		if token, err = config.ReadTokenFile(cfg.TokenFile); err != nil {
			return Target{}, err
		}
	}
	t := Target{
		Name:           "envd:" + u.Host,
		Kind:           KindEnvd,
		Endpoint:       strings.TrimRight(u.String(), "/"),
		Token:          token,
		CAFile:         cfg.CAFile,
		User:           cfg.User,
		Cwd:            cfg.Cwd,
		RuntimeRoot:    cfg.RuntimeRoot,
		AgentWorkspace: cfg.AgentWorkspace,
	}
	if t.AgentWorkspace == "" {
		t.AgentWorkspace = t.Cwd
	}
	return t, nil
}

// RedactURL keeps a URL's scheme and host only, for messages: a path or
// query may hold a token.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}
