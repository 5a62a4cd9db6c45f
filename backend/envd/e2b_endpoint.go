package envd

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

// E2BEnvdURL derives a sandbox's envd URL the way E2B's SDKs do for a direct
// connection: https://49983-<id>.<domain>. An override (E2B_SANDBOX_URL)
// wins for every sandbox; debug mode means http://localhost:49983.
func (c *E2BClient) EnvdURL(sandboxID, domain string) string {
	if domain == "" {
		domain = c.cfg.Domain
	}
	switch {
	case c.cfg.EnvdURLFor != nil:
		return c.cfg.EnvdURLFor(sandboxID, domain)
	case c.cfg.SandboxURL != "":
		return strings.TrimRight(c.cfg.SandboxURL, "/")
	case c.cfg.Debug:
		return "http://localhost:" + strconv.Itoa(E2BEnvdPort)
	}
	return fmt.Sprintf("https://%d-%s.%s", E2BEnvdPort, sandboxID, domain)
}

// E2BSandboxHeaders are the routing headers the SDKs send with every envd
// request; E2B's edge uses them when E2B_SANDBOX_URL names a shared proxy.
func E2BSandboxHeaders(sandboxID string) http.Header {
	h := http.Header{}
	h.Set("E2b-Sandbox-Id", sandboxID)
	h.Set("E2b-Sandbox-Port", strconv.Itoa(E2BEnvdPort))
	return h
}

// E2BLiveness is what a probe concluded about a sandbox.
type E2BLiveness int

const (
	// E2BAlive: envd answered its health check.
	E2BAlive E2BLiveness = iota
	// E2BGone: the control plane no longer knows the sandbox (or says it is
	// not running). Nothing in it runs any more: its groups are settled.
	E2BGone
	// E2BUnreachable: envd did not answer but the control plane still lists
	// the sandbox, or the control plane itself was out of reach. A network
	// fault; the sandbox's processes may well be running.
	E2BUnreachable
	// E2BPaused: the control plane lists the sandbox as paused. Its
	// processes are frozen, not ended: they carry on once someone resumes
	// it, so nothing of it may be settled as gone.
	E2BPaused
)

func (l E2BLiveness) String() string {
	switch l {
	case E2BAlive:
		return "alive"
	case E2BGone:
		return "gone"
	case E2BUnreachable:
		return "unreachable"
	case E2BPaused:
		return "paused"
	}
	return "unknown"
}

// e2bHealthTimeout bounds one envd health check.
const e2bHealthTimeout = 5 * time.Second

// Probe tells a dead sandbox from a network fault, as the SDKs do: envd's
// /health first; when that fails, the control plane decides (404 = gone).
// The error explains an E2BUnreachable verdict and is nil otherwise.
func (c *E2BClient) Probe(ctx context.Context, conn E2BConnection) (E2BLiveness, error) {
	healthErr := c.envdHealth(ctx, conn)
	if healthErr == nil {
		return E2BAlive, nil
	}
	sb, err := c.Get(ctx, conn.SandboxID)
	switch {
	case errors.Is(err, ErrE2BSandboxGone):
		return E2BGone, nil
	case err != nil:
		return E2BUnreachable, fmt.Errorf("e2b: sandbox %s: envd: %v; control plane: %w", conn.SandboxID, healthErr, err)
	case sb.Paused():
		return E2BPaused, fmt.Errorf("e2b: sandbox %s is paused", conn.SandboxID)
	}
	return E2BUnreachable, fmt.Errorf("e2b: sandbox %s is listed as running but its envd does not answer: %w", conn.SandboxID, healthErr)
}

// envdHealth GETs <envd>/health; any 2xx is healthy.
func (c *E2BClient) envdHealth(ctx context.Context, conn E2BConnection) error {
	ctx, cancel := context.WithTimeout(ctx, e2bHealthTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(conn.EnvdURL, "/")+"/health", nil)
	if err != nil {
		return err
	}
	for k, v := range E2BSandboxHeaders(conn.SandboxID) {
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
