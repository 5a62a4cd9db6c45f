package envd

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

// The E2B control plane: configuration, defaults and the client value. The
// REST calls live in e2b_api.go, the envd endpoint derivation and the
// liveness probe in e2b_endpoint.go.

const (
	// E2BDefaultDomain is the domain E2B's SDKs use when E2B_DOMAIN is unset.
	E2BDefaultDomain = "e2b.app"
	// E2BEnvdPort is the port envd listens on inside every sandbox.
	E2BEnvdPort = 49983
	// E2BDefaultUser is the sandbox user E2B's SDKs run commands as.
	E2BDefaultUser = "user"
	// E2BStateSubdir is where sandtop keeps its state in a sandbox, under
	// the sandbox user's home: never in the agent's workspace.
	E2BStateSubdir = ".local/state/sandtop"
	// E2BDefaultConnectTimeout is the sandbox lifetime an explicit resume
	// asks for (and an extend without a duration sets); the control plane
	// only ever extends a TTL on resume. Same value as the SDKs' default
	// sandbox timeout.
	E2BDefaultConnectTimeout = 300 * time.Second
	// E2BMetricsInterval is how often E2B samples a sandbox's CPU and
	// memory; asking more often only returns the same sample.
	E2BMetricsInterval = 5 * time.Second
	// e2bRequestTimeout bounds one control-plane request (SDK default: 60 s).
	e2bRequestTimeout = 60 * time.Second
)

// E2BConfig says how to reach E2B's control plane and the sandboxes behind
// it. E2BConfigFromEnv fills it the way E2B's SDKs read their environment.
type E2BConfig struct {
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

// E2BConfigFromEnv reads E2B_API_KEY, E2B_DOMAIN, E2B_API_URL,
// E2B_SANDBOX_URL and E2B_DEBUG through getenv (os.Getenv when nil).
func E2BConfigFromEnv(getenv func(string) string) E2BConfig {
	if getenv == nil {
		getenv = os.Getenv
	}
	return E2BConfig{
		APIKey:     strings.TrimSpace(getenv("E2B_API_KEY")),
		Domain:     strings.TrimSpace(getenv("E2B_DOMAIN")),
		APIURL:     strings.TrimSpace(getenv("E2B_API_URL")),
		SandboxURL: strings.TrimSpace(getenv("E2B_SANDBOX_URL")),
		Debug:      strings.EqualFold(strings.TrimSpace(getenv("E2B_DEBUG")), "true"),
	}
}

// E2BHome is the home directory of a sandbox user in E2B's templates.
func E2BHome(user string) string {
	switch user {
	case "", E2BDefaultUser:
		return "/home/" + E2BDefaultUser
	case "root":
		return "/root"
	}
	return "/home/" + user
}

// E2BStateDir is sandtop's state directory in a sandbox for user:
// ~/.local/state/sandtop.
func E2BStateDir(user string) string { return path.Join(E2BHome(user), E2BStateSubdir) }

// The shape of the keys E2B itself issues. Current SDKs no longer check it,
// and E2B-compatible providers issue others, so a key of another shape is
// only worth a warning.
var e2bAPIKeyPattern = regexp.MustCompile(`^e2b_[0-9a-fA-F]+$`)

// E2BKeyWarning is a one-line warning for a key that does not look like one
// E2B issues ("" when it does). It never quotes the key.
func E2BKeyWarning(key string) string {
	if key == "" || e2bAPIKeyPattern.MatchString(key) {
		return ""
	}
	return "E2B_API_KEY does not look like an E2B key (e2b_ and hex digits); using it anyway, as E2B-compatible providers issue other shapes"
}

// E2BClient talks to E2B's control plane. It is safe for concurrent use.
type E2BClient struct {
	cfg  E2BConfig
	http *http.Client
}

// NewE2BClient checks the configuration and fills in the defaults.
func NewE2BClient(cfg E2BConfig) (*E2BClient, error) {
	if cfg.APIKey == "" {
		return nil, errors.New("e2b: E2B_API_KEY is not set")
	}
	if strings.ContainsAny(cfg.APIKey, "\r\n\t ") {
		// It goes into an HTTP header, where these would break the request.
		return nil, errors.New("e2b: E2B_API_KEY holds whitespace inside it")
	}
	if cfg.Domain == "" {
		cfg.Domain = E2BDefaultDomain
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
		cfg.ConnectTimeout = E2BDefaultConnectTimeout
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: e2bRequestTimeout}
	}
	return &E2BClient{cfg: cfg, http: hc}, nil
}

// Config returns the effective configuration, defaults filled in.
func (c *E2BClient) Config() E2BConfig { return c.cfg }

// E2BSandbox is one sandbox as the control plane lists or describes it.
type E2BSandbox struct {
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
func (s E2BSandbox) Paused() bool { return s.State == "paused" }

// E2BConnection is what connecting to a sandbox yields: enough to dial its
// envd. String() leaves the tokens out, so it is safe to print.
type E2BConnection struct {
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

func (c E2BConnection) String() string {
	return fmt.Sprintf("e2b sandbox %s (envd %s at %s)", c.SandboxID, c.EnvdVersion, c.EnvdURL)
}

// GoString keeps %#v from printing the tokens too.
func (c E2BConnection) GoString() string { return c.String() }
