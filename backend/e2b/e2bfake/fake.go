// Package e2bfake is a stand-in for E2B's control plane in tests. It serves
// the slice of E2B's published REST API that sandtop uses (list with state
// and metadata filters, detail, metrics, logs, connect, resume, timeout,
// kill), checks X-API-Key, pages the listing through X-Next-Token, records
// every call, and hands out envd URLs the test chooses — typically a
// loopback daemon in envd-compatible mode.
package e2bfake

import (
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"
)

// Domain is the traffic domain the fake reports. The .test TLD never
// resolves, so a URL derived from it can never reach a real host.
const Domain = "sandbox.test"

// Sandbox is one sandbox the fake knows.
type Sandbox struct {
	ID          string
	TemplateID  string
	Alias       string
	State       string // "running" (the default) or "paused"
	EnvdVersion string // default 0.6.13
	// EnvdURL is where the sandbox's envd really is (a loopback daemon).
	EnvdURL string
	// Token is the envd access token connect hands out.
	Token    string
	Metadata map[string]string
	Started  time.Time
	// EndAt is when the sandbox expires; default an hour after Started.
	// Resume and timeout move it.
	EndAt time.Time
	// Metrics are the samples the metrics endpoint serves.
	Metrics []Metric
	// Logs are the sandbox's log lines, oldest first.
	Logs []LogLine
}

// Metric is one sample the metrics endpoint serves.
type Metric struct {
	At                  time.Time
	CPUCount            int
	CPUUsedPct          float64
	MemUsed, MemTotal   int64
	DiskUsed, DiskTotal int64
}

// LogLine is one entry of a sandbox's log.
type LogLine struct {
	At      time.Time
	Level   string
	Message string
}

// Call is one request the fake served (or refused).
type Call struct {
	Method, Route string // route with the sandbox id folded: /sandboxes/{id}
	SandboxID     string
	Body          string
}

// Mutating reports whether the call changes a sandbox's lifecycle: it
// resumes it or moves its end time.
func (c Call) Mutating() bool {
	switch c.Method + " " + c.Route {
	case "POST /sandboxes/{id}/connect", "POST /sandboxes/{id}/resume", "POST /sandboxes/{id}/timeout":
		return true
	}
	return false
}

// Fake is a running fake control plane.
type Fake struct {
	URL    string // base URL, for E2B_API_URL
	APIKey string // the only key it accepts

	srv *httptest.Server

	mu        sync.Mutex
	sandboxes map[string]Sandbox
	pageSize  int
	calls     map[string]int
	log       []Call
	onKill    func(id string)
	lastTTL   map[string]int
}

// New starts a fake that accepts apiKey; it stops when the test ends.
func New(t testing.TB, apiKey string) *Fake {
	t.Helper()
	f := &Fake{
		APIKey:    apiKey,
		sandboxes: map[string]Sandbox{},
		pageSize:  100,
		calls:     map[string]int{},
		lastTTL:   map[string]int{},
	}
	f.srv = httptest.NewServer(f.routes())
	f.URL = f.srv.URL
	t.Cleanup(f.srv.Close)
	return f
}

// Add registers (or replaces) a sandbox.
func (f *Fake) Add(sb Sandbox) {
	if sb.State == "" {
		sb.State = "running"
	}
	if sb.EnvdVersion == "" {
		sb.EnvdVersion = "0.6.13"
	}
	if sb.TemplateID == "" {
		sb.TemplateID = "base"
	}
	if sb.Started.IsZero() {
		sb.Started = time.Now().UTC().Truncate(time.Second)
	}
	if sb.EndAt.IsZero() {
		sb.EndAt = sb.Started.Add(time.Hour)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sandboxes[sb.ID] = sb
}

// Remove forgets a sandbox, as if it expired: from now on the control plane
// answers 404 for it.
func (f *Fake) Remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sandboxes, id)
}

// SetPageSize makes the listing page through X-Next-Token every n entries.
func (f *Fake) SetPageSize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pageSize = max(n, 1)
}

// Calls counts the requests served per route, e.g. "GET /v2/sandboxes".
func (f *Fake) Calls(route string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[route]
}

// Log is every call served so far, in order.
func (f *Fake) Log() []Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Call(nil), f.log...)
}

// MutatingCalls are the calls that resumed a sandbox or moved its end time
// (connect, resume, timeout), in order.
func (f *Fake) MutatingCalls() []Call {
	var out []Call
	for _, c := range f.Log() {
		if c.Mutating() {
			out = append(out, c)
		}
	}
	return out
}

// Sandbox returns a sandbox as the fake holds it now.
func (f *Fake) Sandbox(id string) (Sandbox, bool) { return f.lookup(id) }

// LastConnectTimeout is the timeout body of the last connect to id.
func (f *Fake) LastConnectTimeout(id string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lastTTL[id]
}

// EnvdURLFor is a resolver for e2b.Config.EnvdURLFor: it maps every
// sandbox to the EnvdURL it was registered with (and an unknown one to an
// address that refuses connections).
func (f *Fake) EnvdURLFor(sandboxID, domain string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb, ok := f.sandboxes[sandboxID]; ok && sb.EnvdURL != "" {
		return sb.EnvdURL
	}
	return "http://127.0.0.1:1"
}

func (f *Fake) sorted(state map[string]bool) []Sandbox {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []Sandbox
	for _, sb := range f.sandboxes {
		if len(state) == 0 || state[sb.State] {
			out = append(out, sb)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

func (f *Fake) lookup(id string) (Sandbox, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, ok := f.sandboxes[id]
	return sb, ok
}

func (f *Fake) record(c Call) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[c.Method+" "+c.Route]++
	f.log = append(f.log, c)
}
