package e2b

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"time"
)

// The two calls that change a sandbox's lifecycle. Each is an explicit
// operator action (a confirmed TUI action or "sandtop e2b resume|extend");
// nothing that lists, watches or attaches calls them.

// e2bSandboxWire is the Sandbox schema that connect answers with.
type e2bSandboxWire struct {
	SandboxID       string  `json:"sandboxID"`
	EnvdVersion     string  `json:"envdVersion"`
	EnvdAccessToken string  `json:"envdAccessToken,omitempty"`
	Domain          *string `json:"domain,omitempty"`
}

// Resume wakes a paused sandbox (a running one stays running) and makes it
// live at least timeout from now; 0 means DefaultConnectTimeout. It is
// POST /sandboxes/{id}/connect, the call E2B recommends over its
// deprecated /resume, and one request in all.
func (c *Client) Resume(ctx context.Context, sandboxID string, timeout time.Duration) (Connection, error) {
	secs, err := timeoutSeconds(timeout, c.cfg.ConnectTimeout)
	if err != nil {
		return Connection{}, err
	}
	if err := checkSandboxID(sandboxID); err != nil {
		return Connection{}, err
	}
	var s e2bSandboxWire
	path := "/sandboxes/" + url.PathEscape(sandboxID) + "/connect"
	if _, err := c.do(ctx, http.MethodPost, path, sandboxID, map[string]int64{"timeout": secs}, &s); err != nil {
		return Connection{}, err
	}
	if s.SandboxID == "" {
		s.SandboxID = sandboxID
	}
	conn := Connection{SandboxID: s.SandboxID, Domain: c.cfg.Domain, EnvdVersion: s.EnvdVersion, AccessToken: s.EnvdAccessToken}
	if s.Domain != nil && *s.Domain != "" {
		conn.Domain = *s.Domain
	}
	conn.EnvdURL = c.EnvdURL(conn.SandboxID, conn.Domain)
	return conn, nil
}

// Extend sets a running sandbox to expire timeout from now (0 means
// DefaultConnectTimeout): POST /sandboxes/{id}/timeout. The control
// plane takes the new end time as given, so it may also shorten it.
func (c *Client) Extend(ctx context.Context, sandboxID string, timeout time.Duration) error {
	secs, err := timeoutSeconds(timeout, c.cfg.ConnectTimeout)
	if err != nil {
		return err
	}
	if err := checkSandboxID(sandboxID); err != nil {
		return err
	}
	path := "/sandboxes/" + url.PathEscape(sandboxID) + "/timeout"
	_, err = c.do(ctx, http.MethodPost, path, sandboxID, map[string]int64{"timeout": secs}, nil)
	return err
}

// timeoutSeconds turns a lifetime into the API's whole seconds (an int32).
func timeoutSeconds(d, def time.Duration) (int64, error) {
	if d == 0 {
		d = def
	}
	if d < time.Second || d > time.Duration(math.MaxInt32)*time.Second {
		return 0, fmt.Errorf("e2b: timeout %s is not between 1s and %d s", d, math.MaxInt32)
	}
	return int64(d / time.Second), nil
}
