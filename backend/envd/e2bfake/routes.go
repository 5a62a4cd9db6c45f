package e2bfake

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// The REST surface, shaped after E2B's published OpenAPI spec: the same
// paths, field names, status codes and Error body ({code, message}).

func (f *Fake) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v2/sandboxes", f.list)
	mux.HandleFunc("GET /sandboxes/{id}", f.get)
	mux.HandleFunc("DELETE /sandboxes/{id}", f.kill)
	mux.HandleFunc("POST /sandboxes/{id}/connect", f.connect)
	return f.authenticated(mux)
}

func (f *Fake) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.count(r.Method + " " + routeName(r.URL.Path))
		if r.Header.Get("X-API-Key") != f.APIKey {
			writeError(w, http.StatusUnauthorized, "Invalid API key")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// routeName folds sandbox ids out of a path, for the call counters.
func routeName(p string) string {
	parts := strings.Split(p, "/")
	if len(parts) >= 3 && parts[1] == "sandboxes" {
		parts[2] = "{id}"
	}
	return strings.Join(parts, "/")
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
	return listed{
		TemplateID: sb.TemplateID, Alias: sb.Alias, SandboxID: sb.ID, ClientID: "fake",
		StartedAt: sb.Started, EndAt: sb.Started.Add(time.Hour),
		CPUCount: 2, MemoryMB: 512, DiskSizeMB: 1024,
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
	all := f.sorted(states)
	start := 0
	if tok := q.Get("nextToken"); tok != "" {
		after, ok := strings.CutPrefix(tok, "after:")
		if !ok {
			writeError(w, http.StatusBadRequest, "invalid nextToken")
			return
		}
		for start < len(all) && all[start].ID <= after {
			start++
		}
	}
	end := min(start+limit, len(all))
	page := make([]listed, 0, end-start)
	for _, sb := range all[start:end] {
		page = append(page, toListed(sb))
	}
	if end < len(all) {
		w.Header().Set("X-Next-Token", "after:"+all[end-1].ID)
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
	var body struct {
		Timeout *int `json:"timeout"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Timeout == nil || *body.Timeout < 0 {
		writeError(w, http.StatusBadRequest, "body must be {\"timeout\": <seconds ≥ 0>}")
		return
	}
	f.mu.Lock()
	sb, ok := f.sandboxes[id]
	status := http.StatusOK
	if ok {
		f.lastTTL[id] = *body.Timeout
		if sb.State == "paused" { // connect resumes a paused sandbox
			sb.State = "running"
			f.sandboxes[id] = sb
			status = http.StatusCreated
		}
	}
	f.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, "sandbox \""+id+"\" not found")
		return
	}
	writeJSON(w, status, connected{
		TemplateID: sb.TemplateID, SandboxID: sb.ID, Alias: sb.Alias, ClientID: "fake",
		EnvdVersion: sb.EnvdVersion, EnvdAccessToken: sb.Token, Domain: Domain,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, map[string]any{"code": status, "message": msg})
}
