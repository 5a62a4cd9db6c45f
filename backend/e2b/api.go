package e2b

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The control-plane calls, following E2B's published OpenAPI spec,
// authenticated by X-API-Key. Listing and describing (GET /v2/sandboxes,
// GET /sandboxes/{id}) change nothing; resuming and extending (POST
// /sandboxes/{id}/connect and /timeout) are explicit actions, in
// lifecycle.go, never called to look.

// ErrAuth is returned (wrapped) when the control plane rejects the key.
var ErrAuth = errors.New("e2b: API key rejected")

// ErrSandboxGone is returned (wrapped) when the control plane no longer
// knows a sandbox: it was killed or it expired. Everything it ran is gone.
var ErrSandboxGone = errors.New("e2b: sandbox not found")

// e2bListPageSize is the largest page the API serves.
const e2bListPageSize = 100

// e2bMaxPages stops a control plane that keeps handing out tokens.
const e2bMaxPages = 1000

// e2bListedSandbox is ListedSandbox / SandboxDetail on the wire.
type e2bListedSandbox struct {
	TemplateID  string            `json:"templateID"`
	Alias       string            `json:"alias,omitempty"`
	SandboxID   string            `json:"sandboxID"`
	StartedAt   time.Time         `json:"startedAt"`
	EndAt       time.Time         `json:"endAt"`
	CPUCount    int               `json:"cpuCount"`
	MemoryMB    int               `json:"memoryMB"`
	DiskSizeMB  int               `json:"diskSizeMB"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	State       string            `json:"state"`
	EnvdVersion string            `json:"envdVersion"`
	Domain      *string           `json:"domain,omitempty"`
	// Only SandboxDetail carries the token.
	EnvdAccessToken string `json:"envdAccessToken,omitempty"`
}

func (s e2bListedSandbox) public() Sandbox {
	out := Sandbox{
		ID: s.SandboxID, TemplateID: s.TemplateID, Alias: s.Alias, State: s.State,
		StartedAt: s.StartedAt, EndAt: s.EndAt, CPUCount: s.CPUCount, MemoryMB: s.MemoryMB,
		DiskSizeMB: s.DiskSizeMB, EnvdVersion: s.EnvdVersion, Metadata: s.Metadata,
	}
	if s.Domain != nil {
		out.Domain = *s.Domain
	}
	return out
}

// ListOptions narrow a listing.
type ListOptions struct {
	// States are "running" and/or "paused"; empty lists both.
	States []string
	// Metadata keeps the sandboxes whose metadata has every pair, as E2B's
	// CLI does with "list -m k=v".
	Metadata map[string]string
}

// ListRunning returns every running sandbox of the team, all pages.
func (c *Client) ListRunning(ctx context.Context) ([]Sandbox, error) {
	return c.List(ctx, ListOptions{States: []string{"running"}})
}

// List returns the team's sandboxes that match opts, all pages. It changes
// nothing: a paused sandbox stays paused.
func (c *Client) List(ctx context.Context, opts ListOptions) ([]Sandbox, error) {
	states := opts.States
	if len(states) == 0 {
		states = []string{"running", "paused"}
	}
	var out []Sandbox
	next := ""
	for page := 0; page < e2bMaxPages; page++ {
		q := url.Values{}
		q.Set("state", strings.Join(states, ","))
		q.Set("limit", fmt.Sprint(e2bListPageSize))
		if len(opts.Metadata) > 0 {
			// The query is itself a query string: key=value pairs, each
			// URL-encoded, then encoded once more as one parameter.
			md := url.Values{}
			for k, v := range opts.Metadata {
				md.Set(k, v)
			}
			q.Set("metadata", md.Encode())
		}
		if next != "" {
			q.Set("nextToken", next)
		}
		var listed []e2bListedSandbox
		hdr, err := c.do(ctx, http.MethodGet, "/v2/sandboxes?"+q.Encode(), "", nil, &listed)
		if err != nil {
			return nil, err
		}
		for _, s := range listed {
			out = append(out, s.public())
		}
		next = hdr.Get("X-Next-Token")
		if next == "" {
			return out, nil
		}
	}
	return nil, fmt.Errorf("e2b: listing sandboxes: more than %d pages; giving up", e2bMaxPages)
}

// Get describes one sandbox. A sandbox the control plane does not know
// gives an error that wraps ErrSandboxGone.
func (c *Client) Get(ctx context.Context, sandboxID string) (Sandbox, error) {
	sb, _, err := c.Describe(ctx, sandboxID)
	return sb, err
}

// Describe is GET /sandboxes/{id}: the sandbox (state, end time, alias,
// metadata) and what it takes to dial its envd (token, domain, derived
// URL). Unlike connect it has no side effect: a paused sandbox stays
// paused and a running one's end time stays where it was. The connection
// of a paused sandbox is filled in but must not be dialled: traffic could
// wake it.
func (c *Client) Describe(ctx context.Context, sandboxID string) (Sandbox, Connection, error) {
	if err := checkSandboxID(sandboxID); err != nil {
		return Sandbox{}, Connection{}, err
	}
	var s e2bListedSandbox
	if _, err := c.do(ctx, http.MethodGet, "/sandboxes/"+url.PathEscape(sandboxID), sandboxID, nil, &s); err != nil {
		return Sandbox{}, Connection{}, err
	}
	if s.SandboxID == "" {
		s.SandboxID = sandboxID
	}
	sb := s.public()
	conn := Connection{
		SandboxID:   sb.ID,
		Domain:      c.cfg.Domain,
		EnvdVersion: sb.EnvdVersion,
		AccessToken: s.EnvdAccessToken,
	}
	if sb.Domain != "" {
		conn.Domain = sb.Domain
	}
	conn.EnvdURL = c.EnvdURL(conn.SandboxID, conn.Domain)
	return sb, conn, nil
}

// Kill deletes a sandbox and everything in it.
func (c *Client) Kill(ctx context.Context, sandboxID string) error {
	if err := checkSandboxID(sandboxID); err != nil {
		return err
	}
	_, err := c.do(ctx, http.MethodDelete, "/sandboxes/"+url.PathEscape(sandboxID), sandboxID, nil, nil)
	return err
}

func checkSandboxID(id string) error {
	if id == "" || strings.ContainsAny(id, "/?#% \t\r\n") {
		return fmt.Errorf("e2b: invalid sandbox id %q", id)
	}
	return nil
}

// e2bAPIError is the Error schema: {code, message}.
type e2bAPIError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// do sends one request and decodes a 2xx JSON answer into out (nil: drop
// it). sandboxID names the sandbox a 404 is about, if any.
func (c *Client) do(ctx context.Context, method, path, sandboxID string, in, out any) (http.Header, error) {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("e2b: encoding %s %s: %w", method, routeOf(path), err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.cfg.APIURL+path, body)
	if err != nil {
		return nil, fmt.Errorf("e2b: %s %s: %w", method, routeOf(path), err)
	}
	req.Header.Set("X-API-Key", c.cfg.APIKey)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "sandtop")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		// A *url.Error names the URL, which holds no secret: the key travels
		// in a header.
		if ctx.Err() != nil {
			return nil, fmt.Errorf("e2b: %s %s: %w", method, routeOf(path), ctx.Err())
		}
		return nil, &ThrottledError{err: fmt.Errorf("e2b: control plane unreachable: %w", err)}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("e2b: %s %s: reading the answer: %w", method, routeOf(path), err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		err := c.statusError(method, path, sandboxID, resp.StatusCode, raw)
		if throttling(resp.StatusCode) {
			err = &ThrottledError{Status: resp.StatusCode, RetryAfter: retryAfter(resp.Header.Get("Retry-After"), time.Now()), err: err}
		}
		return nil, err
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("e2b: %s %s: undecodable answer: %w", method, routeOf(path), err)
		}
	}
	return resp.Header, nil
}

func (c *Client) statusError(method, path, sandboxID string, status int, raw []byte) error {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return fmt.Errorf("%w (%d): check E2B_API_KEY", ErrAuth, status)
	case status == http.StatusNotFound && sandboxID != "":
		return fmt.Errorf("%w: %s is gone (killed or expired)", ErrSandboxGone, sandboxID)
	}
	msg := http.StatusText(status)
	var apiErr e2bAPIError
	if json.Unmarshal(raw, &apiErr) == nil && apiErr.Message != "" {
		msg = apiErr.Message
	}
	return fmt.Errorf("e2b: %s %s: %d: %s", method, routeOf(path), status, oneLine(msg))
}

// routeOf drops the query, so errors name the route and nothing else.
func routeOf(path string) string {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		return path[:i]
	}
	return path
}

// oneLine keeps a server's message to one short line.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
