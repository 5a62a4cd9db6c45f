package e2b

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Where a sandbox's envd is, the headers E2B's edge routes by, and whether a
// sandbox is alive, gone, or merely out of reach.

// EnvdURL derives a sandbox's envd URL the way E2B's SDKs do for a direct
// connection: https://49983-<id>.<domain>. An override (E2B_SANDBOX_URL)
// wins for every sandbox; debug mode means http://localhost:49983.
func (c *Client) EnvdURL(sandboxID, domain string) string {
	if domain == "" {
		domain = c.cfg.Domain
	}
	switch {
	case c.cfg.EnvdURLFor != nil:
		return c.cfg.EnvdURLFor(sandboxID, domain)
	case c.cfg.SandboxURL != "":
		return strings.TrimRight(c.cfg.SandboxURL, "/")
	case c.cfg.Debug:
		return "http://localhost:" + strconv.Itoa(EnvdPort)
	}
	return fmt.Sprintf("https://%d-%s.%s", EnvdPort, sandboxID, domain)
}

// SandboxHeaders are the routing headers the SDKs send with every envd
// request; E2B's edge uses them when E2B_SANDBOX_URL names a shared proxy.
func SandboxHeaders(sandboxID string) http.Header {
	h := http.Header{}
	h.Set("E2b-Sandbox-Id", sandboxID)
	h.Set("E2b-Sandbox-Port", strconv.Itoa(EnvdPort))
	return h
}

// Liveness is what a probe concluded about a sandbox.
type Liveness int

const (
	// Alive: envd answered its health check.
	Alive Liveness = iota
	// Gone: the control plane no longer knows the sandbox (or says it is
	// not running). Nothing in it runs any more: its groups are settled.
	Gone
	// Unreachable: envd did not answer but the control plane still lists
	// the sandbox, or the control plane itself was out of reach. A network
	// fault; the sandbox's processes may well be running.
	Unreachable
	// Paused: the control plane lists the sandbox as paused. Its
	// processes are frozen, not ended: they carry on once someone resumes
	// it, so nothing of it may be settled as gone.
	Paused
)

func (l Liveness) String() string {
	switch l {
	case Alive:
		return "alive"
	case Gone:
		return "gone"
	case Unreachable:
		return "unreachable"
	case Paused:
		return "paused"
	}
	return "unknown"
}

// e2bHealthTimeout bounds one envd health check.
const e2bHealthTimeout = 5 * time.Second

// Probe tells a dead sandbox from a network fault, as the SDKs do: envd's
// /health first; when that fails, the control plane decides (404 = gone).
// The error explains an Unreachable verdict and is nil otherwise.
func (c *Client) Probe(ctx context.Context, conn Connection) (Liveness, error) {
	healthErr := c.envdHealth(ctx, conn)
	if healthErr == nil {
		return Alive, nil
	}
	sb, err := c.Get(ctx, conn.SandboxID)
	switch {
	case errors.Is(err, ErrSandboxGone):
		return Gone, nil
	case err != nil:
		return Unreachable, fmt.Errorf("e2b: sandbox %s: envd: %v; control plane: %w", conn.SandboxID, healthErr, err)
	case sb.Paused():
		return Paused, fmt.Errorf("e2b: sandbox %s is paused", conn.SandboxID)
	}
	return Unreachable, fmt.Errorf("e2b: sandbox %s is listed as running but its envd does not answer: %w", conn.SandboxID, healthErr)
}

// envdHealth GETs <envd>/health; any 2xx is healthy.
func (c *Client) envdHealth(ctx context.Context, conn Connection) error {
	ctx, cancel := context.WithTimeout(ctx, e2bHealthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(conn.EnvdURL, "/")+"/health", nil)
	if err != nil {
		return err
	}
	for k, v := range SandboxHeaders(conn.SandboxID) {
		req.Header[k] = v
	}
	if conn.AccessToken != "" {
		req.Header.Set("X-Access-Token", conn.AccessToken)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// 502 is what E2B's edge answers for a sandbox that is not running.
		return fmt.Errorf("health check answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
	}
	return nil
}
