package target

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/envd"
	"sandtop/backend/kube"
	"sandtop/backend/seam"
	"sandtop/config"
)

// Dialing a target, and opening a seam Runtime over it with the target's
// layout hints. Opening never starts or stops anything in the sandbox, and
// closing leaves every process running.

// defaultPollInterval is the seam's liveness cadence when the caller sets
// none; every tick costs a request, which matters over the internet.
const defaultPollInterval = 50 * time.Millisecond

// probeTimeout bounds the control-plane check behind a "sandbox gone" verdict.
const probeTimeout = 10 * time.Second

// Dial prepares an envd client for t (no connection is made yet).
func Dial(t Target, opts ...envd.Option) (*envd.Client, error) {
	if t.Err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, t.Err)
	}
	if t.Endpoint == "" {
		return nil, fmt.Errorf("target %s has no endpoint", t.Name)
	}
	var base []envd.Option
	if t.Token != "" {
		base = append(base, envd.WithToken(t.Token))
	}
	if t.User != "" {
		base = append(base, envd.WithUser(t.User))
	}
	switch {
	case t.HTTPClient != nil:
		base = append(base, envd.WithHTTPClient(t.HTTPClient))
	case t.CAFile != "":
		hc, err := caClient(t.Endpoint, t.CAFile, t.Headers)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		base = append(base, envd.WithHTTPClient(hc))
	case len(t.Headers) > 0:
		hc, err := headerClient(t.Endpoint, t.Headers)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		base = append(base, envd.WithHTTPClient(hc))
	}
	c, err := envd.Dial(t.Endpoint, append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return c, nil
}

// headerClient is an HTTP client that adds hdr to every request, over the
// same protocols envd.Dial would pick: h2c or HTTP/1.1 as the endpoint
// answers for http, HTTP/2 over TLS (with HTTP/1.1 fallback) for https.
func headerClient(endpoint string, hdr http.Header) (*http.Client, error) {
	u, err := url.Parse(endpoint)
	if err != nil {
		return nil, errors.New("endpoint is not a URL")
	}
	var next http.RoundTripper
	switch u.Scheme {
	case "http":
		next = envd.NegotiatingTransport()
	case "https":
		tr := http.DefaultTransport.(*http.Transport).Clone()
		tr.ForceAttemptHTTP2 = true
		next = tr
	default:
		return nil, fmt.Errorf("endpoint scheme %q cannot carry routing headers", u.Scheme)
	}
	return &http.Client{Transport: headerTransport{next: next, hdr: hdr.Clone()}}, nil
}

type headerTransport struct {
	next http.RoundTripper
	hdr  http.Header
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.hdr {
		r.Header[k] = v
	}
	return h.next.RoundTrip(r)
}

// caClient is an HTTPS client that trusts the CA in caFile (and no other),
// adding hdr to every request.
func caClient(endpoint, caFile string, hdr http.Header) (*http.Client, error) {
	if u, err := url.Parse(endpoint); err != nil || u.Scheme != "https" {
		return nil, fmt.Errorf("--ca-file %s goes with an https:// endpoint, not %s", caFile, RedactURL(endpoint))
	}
	pem, err := config.ReadSmallFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("ca file: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca file %s holds no PEM certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	tr.ForceAttemptHTTP2 = true
	var rt http.RoundTripper = tr
	if len(hdr) > 0 {
		rt = headerTransport{next: tr, hdr: hdr.Clone()}
	}
	return &http.Client{Transport: rt}, nil
}

// Connection is an open target: its client and the seam Runtime over it.
type Connection struct {
	Target  Target
	Client  *envd.Client
	Runtime *seam.Runtime
	// Extension is true when the daemon answered Hello (our daemon); false
	// on stock envd, where the seam runs its compat control plane.
	Extension bool
}

// Open dials t and builds a Runtime. Fields set in cfg win; otherwise the
// runtime root is the one our daemon reports through Hello, or, on stock
// envd, the target's hint, else the seam's per-user default
// (seam.DefaultRuntimeRootIn); Cwd falls back to the hint, then "/".
func Open(ctx context.Context, t Target, cfg seam.RuntimeConfig, opts ...envd.Option) (*Connection, error) {
	c, err := Dial(t, opts...)
	if err != nil {
		return nil, err
	}
	s := &Connection{Target: t, Client: c}
	// On stock envd (no Hello) the target's hint names the root; empty
	// means the seam's per-user default.
	cfg.FallbackRuntimeRoot = t.RuntimeRoot
	if cfg.AgentWorkspace == "" {
		cfg.AgentWorkspace = t.AgentWorkspace
	}
	if cfg.Cwd == "" {
		cfg.Cwd = t.Cwd
	}
	if cfg.Cwd == "" {
		cfg.Cwd = "/"
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = defaultPollInterval
	}
	if cfg.SandboxGone == nil && (t.e2b != nil || t.kube != nil) {
		cfg.SandboxGone = s.goneRecognizer()
	}
	if cfg.Upload == nil {
		cfg.Upload = c.Upload
	}
	rt, err := seam.NewRuntimeClients(ctx, c.Process, c.Supervisor, cfg)
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("target %s: %w", t.Name, err)
	}
	s.Runtime, s.Extension = rt, rt.Info().Extension
	return s, nil
}

// goneRecognizer lets the seam settle an E2B sandbox's groups once the
// control plane confirms the sandbox is gone; a network fault never counts.
func (s *Connection) goneRecognizer() func(error) bool {
	return func(err error) bool {
		if errors.Is(err, e2b.ErrSandboxGone) || errors.Is(err, kube.ErrPodGone) {
			return true
		}
		ctx, cancel := context.WithTimeout(context.Background(), probeTimeout)
		defer cancel()
		l, _ := s.Probe(ctx)
		return l == e2b.Gone
	}
}

// Probe says whether the target's sandbox is alive, gone or unreachable.
// Only E2B targets can be proven gone (the control plane knows); others
// are alive or unreachable, judged by envd's health check.
func (s *Connection) Probe(ctx context.Context) (e2b.Liveness, error) {
	t := s.Target
	if t.e2b != nil {
		return t.e2b.Probe(ctx, t.conn)
	}
	if t.kube != nil {
		return kubeProbe(ctx, t)
	}
	if err := s.Client.Health(ctx); err != nil {
		return e2b.Unreachable, fmt.Errorf("target %s: %w", t.Name, err)
	}
	return e2b.Alive, nil
}

// Close drops the connections. Processes in the sandbox keep running; call
// Runtime.Dispose first to terminate what this connection spawned.
func (s *Connection) Close() {
	if s.Client != nil {
		s.Client.Close()
	}
}

// CloseIdleConnections reaches the transport underneath.
func (h headerTransport) CloseIdleConnections() {
	if c, ok := h.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
