// Package e2b is the client of E2B's control plane (its REST API): list,
// describe, resume, extend and kill sandboxes, their metrics and logs, and
// the envd endpoint and token of each, which package envd then dials.
package e2b

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"path"
	"regexp"
	"strings"
	"time"
)

// Configuration, defaults and the client value. The REST calls live in
// api.go, the envd endpoint derivation and the liveness probe in
// endpoint.go.

const (
	// DefaultDomain is the domain E2B's SDKs use when E2B_DOMAIN is unset.
	DefaultDomain = "e2b.app"
	// EnvdPort is the port envd listens on inside every sandbox.
	EnvdPort = 49983
	// DefaultUser is the sandbox user E2B's SDKs run commands as.
	DefaultUser = "user"
	// StateSubdir is where sandtop keeps its state in a sandbox, under
	// the sandbox user's home: never in the agent's workspace.
	StateSubdir = ".local/state/sandtop"
	// DefaultConnectTimeout is the sandbox lifetime an explicit resume
	// asks for (and an extend without a duration sets); the control plane
	// only ever extends a TTL on resume. Same value as the SDKs' default
	// sandbox timeout.
	DefaultConnectTimeout = 300 * time.Second
	// MetricsInterval is how often E2B samples a sandbox's CPU and
	// memory; asking more often only returns the same sample.
	MetricsInterval = 5 * time.Second
	// e2bRequestTimeout bounds one control-plane request (SDK default: 60 s).
	e2bRequestTimeout = 60 * time.Second
)

// Config says how to reach E2B's control plane and the sandboxes behind
// it. ConfigFromEnv fills it the way E2B's SDKs read their environment.
type Config struct {
	APIKey string // E2B_API_KEY, sent as X-API-Key; never printed
	Domain string // E2B_DOMAIN; default e2b.app
	APIURL string // E2B_API_URL; default https://api.<Domain>
	// SandboxURL (E2B_SANDBOX_URL) replaces the derived envd URL of every
	// sandbox; requests still carry E2b-Sandbox-Id so a routing proxy can
	// tell sandboxes apart.
	SandboxURL string
	// Debug (E2B_DEBUG=true) is the SDKs' local mode: the API at
	// http://localhost:3000 and envd at http://localhost:49983.
	Debug bool
	// ConnectTimeout is the TTL a connect asks for; 0 means the default.
	ConnectTimeout time.Duration
	// HTTPClient carries control-plane requests; nil means a client with a
	// 60 s timeout.
	HTTPClient *http.Client
	// EnvdURLFor, when set, replaces the envd URL derivation entirely. Tests
	// use it to send each sandbox to its own loopback daemon.
	EnvdURLFor func(sandboxID, domain string) string
}

// ConfigFromEnv reads E2B_API_KEY, E2B_DOMAIN, E2B_API_URL,
// E2B_SANDBOX_URL and E2B_DEBUG through getenv (os.Getenv when nil).
func ConfigFromEnv(getenv func(string) string) Config {
	if getenv == nil {
		getenv = os.Getenv
	}
	return Config{
		APIKey:     strings.TrimSpace(getenv("E2B_API_KEY")),
		Domain:     strings.TrimSpace(getenv("E2B_DOMAIN")),
		APIURL:     strings.TrimSpace(getenv("E2B_API_URL")),
		SandboxURL: strings.TrimSpace(getenv("E2B_SANDBOX_URL")),
		Debug:      strings.EqualFold(strings.TrimSpace(getenv("E2B_DEBUG")), "true"),
	}
}

// Home is the home directory of a sandbox user in E2B's templates.
func Home(user string) string {
	switch user {
	case "", DefaultUser:
		return "/home/" + DefaultUser
	case "root":
		return "/root"
	}
	return "/home/" + user
}

// StateDir is sandtop's state directory in a sandbox for user:
// ~/.local/state/sandtop.
func StateDir(user string) string { return path.Join(Home(user), StateSubdir) }

// The shape of the keys E2B itself issues. Current SDKs no longer check it,
// and E2B-compatible providers issue others, so a key of another shape is
// only worth a warning.
var e2bAPIKeyPattern = regexp.MustCompile(`^e2b_[0-9a-fA-F]+$`)

// KeyWarning is a one-line warning for a key that does not look like one
// E2B issues ("" when it does). It never quotes the key.
func KeyWarning(key string) string {
	if key == "" || e2bAPIKeyPattern.MatchString(key) {
		return ""
	}
	return "E2B_API_KEY does not look like an E2B key (e2b_ and hex digits); using it anyway, as E2B-compatible providers issue other shapes"
}

// Client talks to E2B's control plane. It is safe for concurrent use.
type Client struct {
	cfg  Config
	http *http.Client
}

// NewClient checks the configuration and fills in the defaults.
func NewClient(cfg Config) (*Client, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("e2b: E2B_API_KEY is not set")
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n\t ") {
		// It goes into an HTTP header, where these would break the request.
		return nil, errors.New("e2b: E2B_API_KEY holds whitespace inside it")
	}
	if cfg.Domain == "" {
		cfg.Domain = DefaultDomain
	}
	if cfg.APIURL == "" {
		if cfg.Debug {
			cfg.APIURL = "http://localhost:3000"
		} else {
			cfg.APIURL = "https://api." + cfg.Domain
		}
	}
	cfg.APIURL = strings.TrimRight(cfg.APIURL, "/")
	if !strings.HasPrefix(cfg.APIURL, "http://") && !strings.HasPrefix(cfg.APIURL, "https://") {
		return nil, fmt.Errorf("e2b: E2B_API_URL %q is not an http(s) URL", cfg.APIURL)
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: e2bRequestTimeout}
	}
	return &Client{cfg: cfg, http: guardRedirects(hc)}, nil
}

// Config returns the effective configuration, defaults filled in.
func (c *Client) Config() Config { return c.cfg }

// Sandbox is one sandbox as the control plane lists or describes it.
type Sandbox struct {
	ID          string
	TemplateID  string
	Alias       string // the template's alias, if any
	State       string // "running" or "paused"
	StartedAt   time.Time
	EndAt       time.Time
	CPUCount    int
	MemoryMB    int
	DiskSizeMB  int
	EnvdVersion string
	Domain      string // only GET /sandboxes/{id} reports it
	Metadata    map[string]string
}

// Paused says the sandbox is frozen: nothing in it runs until someone
// resumes it, and looking at it must not.
func (s Sandbox) Paused() bool { return s.State == "paused" }

// Connection is what connecting to a sandbox yields: enough to dial its
// envd. String() leaves the tokens out, so it is safe to print.
type Connection struct {
	SandboxID   string
	Domain      string // the sandbox's traffic domain (the config's when unset)
	EnvdVersion string
	EnvdURL     string
	// AccessToken is envd's X-Access-Token; empty for sandboxes created
	// without "secure". Never log it.
	AccessToken string
	// TrafficAccessToken guards the sandbox's public ports; sandtop does not
	// need it but keeps it for callers that do.
	TrafficAccessToken string
}

func (c Connection) String() string {
	return fmt.Sprintf("e2b sandbox %s (envd %s at %s)", c.SandboxID, c.EnvdVersion, c.EnvdURL)
}

// GoString keeps %#v from printing the tokens too.
func (c Connection) GoString() string { return c.String() }
