// Package e2bfake is a stand-in for E2B's control plane in tests. It serves
// the slice of E2B's published REST API that sandtop uses (list with state
// and metadata filters, detail, metrics, logs, connect, resume, timeout,
// kill), checks X-API-Key, pages the listing through X-Next-Token, records
// every call, and hands out envd URLs the test chooses — typically a
// loopback daemon in envd-compatible mode. It counts requests per route and
// can refuse the next requests with 429 or a 5xx, for tests of backoff.
// It stays cheap with a thousand sandboxes: the listing pages 100 at a time
// from an index kept sorted, and the call log can be switched off.
package e2bfake

import (
	"maps"
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
	// CPUCount and MemoryMB are the sandbox's size as the listing and the
	// detail give it; default 2 CPUs and 512 MiB.
	CPUCount, MemoryMB int
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
	At            time.Time
	// Refused is the status of a refusal asked for with FailNext (429,
	// 5xx); 0 for a call the fake served normally.
	Refused int
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
	ids       []string // the keys of sandboxes, sorted; nil when stale
	pageSize  int
	calls     map[string]int
	log       []Call
	noLog     bool
	failLeft  int // requests still to refuse with failWith
	failWith  int
	failAfter time.Duration // Retry-After of a 429
	onKill    func(id string)
	lastTTL   map[string]int
}

// New starts a fake that accepts apiKey; it stops when the test ends.
func New(t testing.TB, apiKey string) *Fake {
	t.Helper()
	f := Start(apiKey)
	t.Cleanup(f.Close)
	return f
}

// Start starts a fake outside a test (the benchmark's); Close stops it.
func Start(apiKey string) *Fake {
	f := &Fake{
		APIKey:    apiKey,
		sandboxes: map[string]Sandbox{},
		pageSize:  100,
		calls:     map[string]int{},
		lastTTL:   map[string]int{},
	}
	f.srv = httptest.NewServer(f.routes())
	f.URL = f.srv.URL
	return f
}

// Close stops the fake's server.
func (f *Fake) Close() { f.srv.Close() }

// KeepLog switches the call log (Log, MutatingCalls) on, the default, or
// off, for long runs that only need the counts.
func (f *Fake) KeepLog(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noLog = !on
	if !on {
		f.log = nil
	}
}

// FailNext refuses the next n requests, whatever their route, with status
// (429 or a 5xx) and E2B's error body; a 429 says Retry-After: retryAfter,
// rounded up to whole seconds, when that is positive. The refusals are
// counted and logged like any call, with Call.Refused set.
func (f *Fake) FailNext(n, status int, retryAfter time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failLeft, f.failWith, f.failAfter = n, status, retryAfter
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
	if _, known := f.sandboxes[sb.ID]; !known {
		f.ids = nil
	}
	f.sandboxes[sb.ID] = sb
}

// Remove forgets a sandbox, as if it expired: from now on the control plane
// answers 404 for it.
func (f *Fake) Remove(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.sandboxes, id)
	f.ids = nil
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

// Counts is the number of requests per route so far ("GET /v2/sandboxes":
// 12), refusals included.
func (f *Fake) Counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.calls)
}

// Total is the number of requests so far, refusals included.
func (f *Fake) Total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
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

// sorted returns the sandboxes in one of the states (any when empty) by
// id, from the first id after "after" (all when empty), at most limit of
// them (no bound when limit ≤ 0), and whether more follow.
func (f *Fake) sorted(state map[string]bool, after string, limit int, keep func(Sandbox) bool) ([]Sandbox, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = make([]string, 0, len(f.sandboxes))
		for id := range f.sandboxes {
			f.ids = append(f.ids, id)
		}
		sort.Strings(f.ids)
	}
	start := 0
	if after != "" {
		start = sort.SearchStrings(f.ids, after)
		if start < len(f.ids) && f.ids[start] == after {
			start++
		}
	}
	var out []Sandbox
	for _, id := range f.ids[start:] {
		sb := f.sandboxes[id]
		if (len(state) != 0 && !state[sb.State]) || (keep != nil && !keep(sb)) {
			continue
		}
		if limit > 0 && len(out) == limit {
			return out, true
		}
		out = append(out, sb)
	}
	return out, false
}

func (f *Fake) lookup(id string) (Sandbox, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, ok := f.sandboxes[id]
	return sb, ok
}

// record counts and logs a call, and says whether to refuse it (FailNext):
// with which status and Retry-After.
func (f *Fake) record(c Call) (refuse int, retryAfter time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failLeft > 0 {
		f.failLeft--
		c.Refused, retryAfter = f.failWith, f.failAfter
	}
	f.calls[c.Method+" "+c.Route]++
	if !f.noLog {
		f.log = append(f.log, c)
	}
	return c.Refused, retryAfter
}
