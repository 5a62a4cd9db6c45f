package e2bfake

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The REST surface, shaped after E2B's published OpenAPI spec: the same
// paths, field names, status codes and Error body ({code, message}).

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/sandboxes", f.list)
	mux.HandleFunc("GET /sandboxes", f.listV1)
	mux.HandleFunc("GET /sandboxes/{id}", f.get)
	mux.HandleFunc("DELETE /sandboxes/{id}", f.kill)
	mux.HandleFunc("POST /sandboxes/{id}/connect", f.connect)
	mux.HandleFunc("POST /sandboxes/{id}/resume", f.resume)
	mux.HandleFunc("POST /sandboxes/{id}/timeout", f.timeout)
	mux.HandleFunc("GET /sandboxes/{id}/metrics", f.metrics)
	mux.HandleFunc("GET /sandboxes/{id}/logs", f.logsV1)
	mux.HandleFunc("GET /v2/sandboxes/{id}/logs", f.logsV2)
	return f.authenticated(mux)
}

// authenticated records the call, then checks the key.
func (f *Fake) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		r.Body = io.NopCloser(bytes.NewReader(body))
		route, id := routeName(r.URL.Path)
		refuse, retryAfter := f.record(Call{Method: r.Method, Route: route, SandboxID: id, Body: string(body), At: time.Now()})
		if refuse != 0 {
			if refuse == http.StatusTooManyRequests && retryAfter > 0 {
				w.Header().Set("Retry-After", strconv.Itoa(int((retryAfter+time.Second-1)/time.Second)))
			}
			writeError(w, refuse, http.StatusText(refuse))
			return
		}
		if r.Header.Get("X-API-Key") != f.APIKey {
			writeError(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// routeName folds the sandbox id out of a path, for the call log.
func routeName(p string) (route, id string) {
	parts := strings.Split(p, "/")
	i := 1
	if len(parts) > 1 && parts[1] == "v2" {
		i = 2
	}
	if len(parts) > i+1 && parts[i] == "sandboxes" && parts[i+1] != "" {
		id, parts[i+1] = parts[i+1], "{id}"
	}
	return strings.Join(parts, "/"), id
}

type listed struct {
	TemplateID  string            `json:"templateID"`
	Alias       string            `json:"alias,omitempty"`
	SandboxID   string            `json:"sandboxID"`
	ClientID    string            `json:"clientID"`
	StartedAt   time.Time         `json:"startedAt"`
	EndAt       time.Time         `json:"endAt"`
	CPUCount    int               `json:"cpuCount"`
	MemoryMB    int               `json:"memoryMB"`
	DiskSizeMB  int               `json:"diskSizeMB"`
	Metadata    map[string]string `json:"metadata,omitempty"`
	State       string            `json:"state"`
	EnvdVersion string            `json:"envdVersion"`
	// Only the detail (GET /sandboxes/{id}) carries these two.
	EnvdAccessToken string `json:"envdAccessToken,omitempty"`
	Domain          string `json:"domain,omitempty"`
}

func toListed(sb Sandbox) listed {
	cpus, mem := sb.CPUCount, sb.MemoryMB
	if cpus == 0 {
		cpus = 2
	}
	if mem == 0 {
		mem = 512
	}
	return listed{
		TemplateID: sb.TemplateID, Alias: sb.Alias, SandboxID: sb.ID, ClientID: "fake",
		StartedAt: sb.Started, EndAt: sb.EndAt,
		CPUCount: cpus, MemoryMB: mem, DiskSizeMB: 1024,
		Metadata: sb.Metadata, State: sb.State, EnvdVersion: sb.EnvdVersion,
	}
}

func (f *Fake) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states := map[string]bool{}
	for _, v := range q["state"] { // form style, explode false: "running,paused"
		for _, s := range strings.Split(v, ",") {
			if s != "running" && s != "paused" {
				writeError(w, http.StatusBadRequest, "invalid state "+strconv.Quote(s))
				return
			}
			states[s] = true
		}
	}
	f.mu.Lock()
	limit := f.pageSize
	f.mu.Unlock()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, http.StatusBadRequest, "limit must be between 1 and 100")
			return
		}
		limit = min(limit, n)
	}
	keep, err := metadataFilter(q.Get("metadata"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	after := ""
	if tok := q.Get("nextToken"); tok != "" {
		var ok bool
		if after, ok = strings.CutPrefix(tok, "after:"); !ok || after == "" {
			writeError(w, http.StatusBadRequest, "invalid nextToken")
			return
		}
	}
	sbs, more := f.sorted(states, after, limit, keep)
	page := make([]listed, 0, len(sbs))
	for _, sb := range sbs {
		page = append(page, toListed(sb))
	}
	if more {
		w.Header().Set("X-Next-Token", "after:"+sbs[len(sbs)-1].ID)
	}
	writeJSON(w, http.StatusOK, page)
}

// metadataFilter keeps the sandboxes that match a metadata query
// ("k=v&k2=v2", each part URL-encoded): every pair must match.
func metadataFilter(metadata string) (func(Sandbox) bool, error) {
	want, err := url.ParseQuery(metadata)
	if err != nil {
		return nil, err
	}
	return func(sb Sandbox) bool {
		for k, vs := range want {
			if sb.Metadata[k] != vs[0] {
				return false
			}
		}
		return true
	}, nil
}

// listV1 is the deprecated listing: running sandboxes, one page.
func (f *Fake) listV1(w http.ResponseWriter, r *http.Request) {
	keep, err := metadataFilter(r.URL.Query().Get("metadata"))
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	all, _ := f.sorted(map[string]bool{"running": true}, "", 0, keep)
	page := make([]listed, 0, len(all))
	for _, sb := range all {
		page = append(page, toListed(sb))
	}
	writeJSON(w, http.StatusOK, page)
}

func (f *Fake) get(w http.ResponseWriter, r *http.Request) {
	sb, ok := f.lookup(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox \""+r.PathValue("id")+"\" doesn't exist or you don't have access to it")
		return
	}
	d := toListed(sb)
	d.EnvdAccessToken = sb.Token
	d.Domain = Domain
	writeJSON(w, http.StatusOK, d)
}

func (f *Fake) kill(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if _, ok := f.lookup(id); !ok {
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" not found")
		return
	}
	f.Remove(id)
	f.mu.Lock()
	hook := f.onKill
	f.mu.Unlock()
	if hook != nil {
		hook(id)
	}
	w.WriteHeader(http.StatusNoContent)
}

type connected struct {
	TemplateID      string `json:"templateID"`
	SandboxID       string `json:"sandboxID"`
	Alias           string `json:"alias,omitempty"`
	ClientID        string `json:"clientID"`
	EnvdVersion     string `json:"envdVersion"`
	EnvdAccessToken string `json:"envdAccessToken,omitempty"`
	Domain          string `json:"domain"`
}

func (f *Fake) connect(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	secs, ok := timeoutBody(w, r, true)
	if !ok {
		return
	}
	status := http.StatusOK
	sb, found := f.update(id, func(sb *Sandbox) {
		f.lastTTL[id] = secs
		if sb.State == "paused" { // connect resumes a paused sandbox
			sb.State = "running"
			status = http.StatusCreated
		}
		if end := time.Now().UTC().Add(time.Duration(secs) * time.Second); end.After(sb.EndAt) {
			sb.EndAt = end // and only ever extends the end time
		}
	})
	if !found {
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" not found")
		return
	}
	writeJSON(w, status, toConnected(sb))
}

func toConnected(sb Sandbox) connected {
	return connected{TemplateID: sb.TemplateID, SandboxID: sb.ID, Alias: sb.Alias, ClientID: "fake",
		EnvdVersion: sb.EnvdVersion, EnvdAccessToken: sb.Token, Domain: Domain}
}

// update changes a sandbox under the lock; found is false for an unknown id.
func (f *Fake) update(id string, change func(*Sandbox)) (sb Sandbox, found bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	sb, found = f.sandboxes[id]
	if found {
		change(&sb)
		f.sandboxes[id] = sb
	}
	return sb, found
}

// timeoutBody decodes {"timeout": seconds ≥ 0}, answering 400 otherwise;
// an empty body means the API's default where the timeout is optional.
func timeoutBody(w http.ResponseWriter, r *http.Request, required bool) (int, bool) {
	var body struct {
		Timeout *int `json:"timeout"`
	}
	err := json.NewDecoder(r.Body).Decode(&body)
	switch {
	case err == io.EOF && !required:
		return 15, true // the API's default for resume
	case err != nil || body.Timeout == nil || *body.Timeout < 0:
		writeError(w, http.StatusBadRequest, "body must be {\"timeout\": <seconds ≥ 0>}")
		return 0, false
	}
	return *body.Timeout, true
}

// resume is the deprecated resume: a running sandbox is a conflict.
func (f *Fake) resume(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	secs, ok := timeoutBody(w, r, false)
	if !ok {
		return
	}
	wasRunning := false
	sb, found := f.update(id, func(sb *Sandbox) {
		if wasRunning = sb.State == "running"; !wasRunning {
			sb.State = "running"
			sb.EndAt = time.Now().UTC().Add(time.Duration(secs) * time.Second)
		}
	})
	switch {
	case !found:
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" not found")
	case wasRunning:
		writeError(w, http.StatusConflict, "sandbox \""+id+"\" is already running")
	default:
		writeJSON(w, http.StatusCreated, toConnected(sb))
	}
}

// timeout sets the end time to now + timeout, shortening it if so asked.
func (f *Fake) timeout(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	secs, ok := timeoutBody(w, r, true)
	if !ok {
		return
	}
	if _, found := f.update(id, func(sb *Sandbox) {
		sb.EndAt = time.Now().UTC().Add(time.Duration(secs) * time.Second)
	}); !found {
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" not found")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type metricWire struct {
	Timestamp     time.Time `json:"timestamp"`
	TimestampUnix int64     `json:"timestampUnix"`
	CPUCount      int       `json:"cpuCount"`
	CPUUsedPct    float64   `json:"cpuUsedPct"`
	MemUsed       int64     `json:"memUsed"`
	MemTotal      int64     `json:"memTotal"`
	MemCache      int64     `json:"memCache"`
	DiskUsed      int64     `json:"diskUsed"`
	DiskTotal     int64     `json:"diskTotal"`
}

// metrics serves the samples in [start, end] (seconds; both optional).
func (f *Fake) metrics(w http.ResponseWriter, r *http.Request) {
	sb, ok := f.lookup(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox \""+r.PathValue("id")+"\" not found")
		return
	}
	bound := func(name string, def int64) (int64, bool) {
		v := r.URL.Query().Get(name)
		if v == "" {
			return def, true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, http.StatusBadRequest, name+" must be unix seconds")
			return 0, false
		}
		return n, true
	}
	start, ok1 := bound("start", 0)
	end, ok2 := bound("end", 1<<62)
	if !ok1 || !ok2 {
		return
	}
	out := []metricWire{}
	for _, m := range sb.Metrics {
		if u := m.At.Unix(); u >= start && u <= end {
			out = append(out, metricWire{Timestamp: m.At.UTC(), TimestampUnix: u, CPUCount: m.CPUCount, CPUUsedPct: m.CPUUsedPct,
				MemUsed: m.MemUsed, MemTotal: m.MemTotal, DiskUsed: m.DiskUsed, DiskTotal: m.DiskTotal})
		}
	}
	writeJSON(w, http.StatusOK, out)
}

type logEntryWire struct {
	Timestamp time.Time         `json:"timestamp"`
	Level     string            `json:"level"`
	Message   string            `json:"message"`
	Fields    map[string]string `json:"fields"`
}

// sandboxLogs picks a sandbox's log for both log routes, answering 404 for
// an unknown sandbox and 400 for a bad limit.
func (f *Fake) sandboxLogs(w http.ResponseWriter, r *http.Request) ([]LogLine, int, bool) {
	sb, ok := f.lookup(r.PathValue("id"))
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox \""+r.PathValue("id")+"\" not found")
		return nil, 0, false
	}
	limit := 1000
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1000 {
			writeError(w, http.StatusBadRequest, "limit must be between 0 and 1000")
			return nil, 0, false
		}
		limit = n
	}
	return sb.Logs, limit, true
}

// logsV2 serves entries newest first with direction=backward, else oldest
// first.
func (f *Fake) logsV2(w http.ResponseWriter, r *http.Request) {
	lines, limit, ok := f.sandboxLogs(w, r)
	if !ok {
		return
	}
	out := []logEntryWire{}
	backward := r.URL.Query().Get("direction") == "backward"
	for i := range lines {
		l := lines[i]
		if backward {
			l = lines[len(lines)-1-i]
		}
		if len(out) == limit {
			break
		}
		out = append(out, logEntryWire{Timestamp: l.At.UTC(), Level: l.Level, Message: l.Message, Fields: map[string]string{}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": out})
}

// logsV1 is the deprecated logs route: plain lines and entries.
func (f *Fake) logsV1(w http.ResponseWriter, r *http.Request) {
	lines, limit, ok := f.sandboxLogs(w, r)
	if !ok {
		return
	}
	type plain struct {
		Timestamp time.Time `json:"timestamp"`
		Line      string    `json:"line"`
	}
	logs, entries := []plain{}, []logEntryWire{}
	for _, l := range lines[:min(limit, len(lines))] {
		logs = append(logs, plain{Timestamp: l.At.UTC(), Line: l.Message})
		entries = append(entries, logEntryWire{Timestamp: l.At.UTC(), Level: l.Level, Message: l.Message, Fields: map[string]string{}})
	}
	writeJSON(w, http.StatusOK, map[string]any{"logs": logs, "logEntries": entries})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}
