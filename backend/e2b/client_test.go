package e2b

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sandtop/backend/e2b/e2bfake"
)

const testKey = "e2b_0123456789abcdef0123456789abcdef"

func newTestE2B(t *testing.T, f *e2bfake.Fake, key string) *Client {
	t.Helper()
	c, err := NewClient(Config{APIKey: key, APIURL: f.URL, EnvdURLFor: f.EnvdURLFor})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// ctxT bounds one test; generous, as the box is shared and runs -race.
func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestE2BConfigFromEnvDefaults(t *testing.T) {
	env := map[string]string{"E2B_API_KEY": " " + testKey + "\n"}
	cfg := ConfigFromEnv(func(k string) string { return env[k] })
	c, err := NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	if got.APIKey != testKey || got.Domain != "e2b.app" || got.APIURL != "https://api.e2b.app" {
		t.Fatalf("defaults: domain %q api %q key trimmed %v", got.Domain, got.APIURL, got.APIKey == testKey)
	}
	if u := c.EnvdURL("sbx1", ""); u != "https://49983-sbx1.e2b.app" {
		t.Fatalf("derived envd URL %q", u)
	}
	if u := c.EnvdURL("sbx1", "eu.example.test"); u != "https://49983-sbx1.eu.example.test" {
		t.Fatalf("envd URL on the sandbox's own domain %q", u)
	}

	env["E2B_DOMAIN"] = "example.test"
	c, _ = NewClient(ConfigFromEnv(func(k string) string { return env[k] }))
	if c.Config().APIURL != "https://api.example.test" {
		t.Fatalf("api URL follows E2B_DOMAIN: %q", c.Config().APIURL)
	}
	env["E2B_API_URL"] = "http://127.0.0.1:9/"
	env["E2B_SANDBOX_URL"] = "http://127.0.0.1:8/"
	c, _ = NewClient(ConfigFromEnv(func(k string) string { return env[k] }))
	if c.Config().APIURL != "http://127.0.0.1:9" || c.EnvdURL("x", "") != "http://127.0.0.1:8" {
		t.Fatalf("overrides: api %q envd %q", c.Config().APIURL, c.EnvdURL("x", ""))
	}

	debug := map[string]string{"E2B_API_KEY": testKey, "E2B_DEBUG": "TRUE"}
	c, _ = NewClient(ConfigFromEnv(func(k string) string { return debug[k] }))
	if c.Config().APIURL != "http://localhost:3000" || c.EnvdURL("x", "") != "http://localhost:49983" {
		t.Fatalf("debug mode: api %q envd %q", c.Config().APIURL, c.EnvdURL("x", ""))
	}
}

// TestE2BAnyKeyShapeIsUsed: a key of another shape (an E2B-compatible
// provider's) is sent as given, with a one-line warning that does not
// quote it; only an empty key, or one that would break the header, is
// refused.
func TestE2BAnyKeyShapeIsUsed(t *testing.T) {
	if _, err := NewClient(Config{}); err == nil || !strings.Contains(err.Error(), "E2B_API_KEY is not set") {
		t.Fatalf("missing key: %v", err)
	}
	if _, err := NewClient(Config{APIKey: "sk_test 123"}); err == nil || strings.Contains(err.Error(), "sk_test") {
		t.Fatalf("a key with a space inside: %v", err)
	}
	if w := KeyWarning(testKey); w != "" {
		t.Fatalf("an E2B-shaped key warned: %s", w)
	}
	const key = "sk_test_123"
	w := KeyWarning(key)
	if w == "" || strings.Contains(w, key) || strings.Contains(w, "\n") {
		t.Fatalf("warning for an unusual key: %q", w)
	}
	f := e2bfake.New(t, key)
	f.Add(e2bfake.Sandbox{ID: "sbx1"})
	if got, err := newTestE2B(t, f, key).List(ctxT(t), ListOptions{}); err != nil || len(got) != 1 {
		t.Fatalf("listing with %s: %v %v", key, got, err)
	}
}

func TestE2BWrongKeyIsOneClearLine(t *testing.T) {
	f := e2bfake.New(t, testKey)
	wrong := "e2b_ffffffffffffffffffffffffffffffff"
	c := newTestE2B(t, f, wrong)
	_, err := c.ListRunning(ctxT(t))
	if !errors.Is(err, ErrAuth) {
		t.Fatalf("want ErrAuth, got %v", err)
	}
	want := "e2b: API key rejected (401): check E2B_API_KEY"
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatal("the error leaks the key")
	}
	if _, _, err := c.Describe(ctxT(t), "sbx"); !errors.Is(err, ErrAuth) {
		t.Fatalf("describe with a wrong key: %v", err)
	}
}

func TestE2BListRunningPagesAndFilters(t *testing.T) {
	f := e2bfake.New(t, testKey)
	for i := range 7 {
		f.Add(e2bfake.Sandbox{ID: fmt.Sprintf("sbx%02d", i), Token: "tok", Metadata: map[string]string{"n": fmt.Sprint(i)}})
	}
	f.Add(e2bfake.Sandbox{ID: "sbx-paused", State: "paused"})
	f.SetPageSize(3)
	got, err := newTestE2B(t, f, testKey).ListRunning(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 7 {
		t.Fatalf("listed %d sandboxes, want the 7 running ones: %+v", len(got), got)
	}
	for i, sb := range got {
		if sb.ID != fmt.Sprintf("sbx%02d", i) || sb.State != "running" || sb.EnvdVersion == "" || sb.Metadata["n"] != fmt.Sprint(i) {
			t.Fatalf("entry %d: %+v", i, sb)
		}
	}
	if n := f.Calls("GET /v2/sandboxes"); n != 3 {
		t.Fatalf("%d list requests, want 3 pages", n)
	}
}

// TestE2BDescribeChangesNothing: the detail carries the envd token and
// address, and reading it leaves a paused sandbox paused and every end
// time where it was; only Resume and Extend change them, one call each.
func TestE2BDescribeChangesNothing(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "sbxA", Token: "envd-secret-A", EnvdURL: "http://127.0.0.1:7"})
	f.Add(e2bfake.Sandbox{ID: "sbxP", State: "paused", Token: "envd-secret-P"})
	c := newTestE2B(t, f, testKey)
	endA, _ := f.Sandbox("sbxA")

	sb, conn, err := c.Describe(ctxT(t), "sbxA")
	if err != nil {
		t.Fatal(err)
	}
	if conn.SandboxID != "sbxA" || conn.AccessToken != "envd-secret-A" || conn.EnvdURL != "http://127.0.0.1:7" ||
		conn.Domain != e2bfake.Domain || conn.EnvdVersion != "0.6.13" || sb.State != "running" || !sb.EndAt.Equal(endA.EndAt) {
		t.Fatalf("detail %+v connection %+v", sb, conn)
	}
	for _, s := range []string{conn.String(), fmt.Sprintf("%v %+v %#v", conn, conn, conn)} {
		if strings.Contains(s, "envd-secret") {
			t.Fatalf("printing a connection leaks its token: %s", s)
		}
	}
	if sb, _, err := c.Describe(ctxT(t), "sbxP"); err != nil || !sb.Paused() {
		t.Fatalf("paused sandbox: %+v %v", sb, err)
	}
	if _, err := c.List(ctxT(t), ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if calls := f.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("looking changed sandboxes: %+v", calls)
	}
	if now, _ := f.Sandbox("sbxP"); now.State != "paused" {
		t.Fatal("describing woke the paused sandbox")
	}

	// Resume is one connect call, with the asked lifetime.
	if _, err := c.Resume(ctxT(t), "sbxP", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	calls := f.MutatingCalls()
	if len(calls) != 1 || calls[0].Route != "/sandboxes/{id}/connect" || calls[0].SandboxID != "sbxP" || f.LastConnectTimeout("sbxP") != 600 {
		t.Fatalf("resume made %+v", calls)
	}
	if sb, err := c.Get(ctxT(t), "sbxP"); err != nil || sb.State != "running" || time.Until(sb.EndAt) < 9*time.Minute {
		t.Fatalf("after resume: %+v %v", sb, err)
	}
	// Extend is one timeout call.
	if err := c.Extend(ctxT(t), "sbxA", 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	calls = f.MutatingCalls()
	if len(calls) != 2 || calls[1].Route != "/sandboxes/{id}/timeout" || calls[1].Body != "{\"timeout\":120}\n" && calls[1].Body != "{\"timeout\":120}" {
		t.Fatalf("extend made %+v", calls)
	}
	if sb, _ := c.Get(ctxT(t), "sbxA"); time.Until(sb.EndAt) > 2*time.Minute+5*time.Second {
		t.Fatalf("extend did not set the end time: %s left", time.Until(sb.EndAt))
	}
	if err := c.Extend(ctxT(t), "sbxA", 500*time.Millisecond); err == nil {
		t.Fatal("a sub-second timeout was accepted")
	}

	for _, call := range []func() error{
		func() error { _, err := c.Resume(ctxT(t), "nope", 0); return err },
		func() error { _, err := c.Get(ctxT(t), "nope"); return err },
		func() error { return c.Extend(ctxT(t), "nope", time.Minute) },
		func() error { return c.Kill(ctxT(t), "nope") },
	} {
		if err := call(); !errors.Is(err, ErrSandboxGone) || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("unknown sandbox: %v", err)
		}
	}
	if _, _, err := c.Describe(ctxT(t), "../x"); err == nil {
		t.Fatal("a sandbox id with a slash was accepted")
	}
}

func TestE2BListStatesAndMetadata(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "a", Metadata: map[string]string{"app": "web", "owner": "ann & co"}})
	f.Add(e2bfake.Sandbox{ID: "b", State: "paused", Metadata: map[string]string{"app": "web"}})
	f.Add(e2bfake.Sandbox{ID: "c", Metadata: map[string]string{"app": "db"}})
	c := newTestE2B(t, f, testKey)
	ids := func(opts ListOptions) string {
		got, err := c.List(ctxT(t), opts)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, sb := range got {
			out = append(out, sb.ID+"/"+sb.State)
		}
		return strings.Join(out, " ")
	}
	if got := ids(ListOptions{}); got != "a/running b/paused c/running" {
		t.Fatalf("all states: %s", got)
	}
	if got := ids(ListOptions{Metadata: map[string]string{"app": "web"}}); got != "a/running b/paused" {
		t.Fatalf("app=web: %s", got)
	}
	if got := ids(ListOptions{Metadata: map[string]string{"app": "web", "owner": "ann & co"}}); got != "a/running" {
		t.Fatalf("two pairs, one needing escapes: %s", got)
	}
	if got := ids(ListOptions{States: []string{"running"}}); got != "a/running c/running" {
		t.Fatalf("running only: %s", got)
	}
}

func TestE2BMetricsAndLogs(t *testing.T) {
	f := e2bfake.New(t, testKey)
	now := time.Now().UTC().Truncate(time.Second)
	f.Add(e2bfake.Sandbox{ID: "m",
		Metrics: []e2bfake.Metric{
			{At: now.Add(-10 * time.Minute), CPUCount: 2, CPUUsedPct: 99, MemUsed: 1, MemTotal: 2},
			{At: now.Add(-10 * time.Second), CPUCount: 2, CPUUsedPct: 12.5, MemUsed: 256 << 20, MemTotal: 512 << 20},
			{At: now.Add(-5 * time.Second), CPUCount: 2, CPUUsedPct: 20.25, MemUsed: 300 << 20, MemTotal: 512 << 20},
		},
		Logs: []e2bfake.LogLine{{At: now.Add(-3 * time.Second), Level: "info", Message: "envd started"}, {At: now.Add(-time.Second), Level: "warn", Message: "low memory"}},
	})
	f.Add(e2bfake.Sandbox{ID: "fresh"})
	c := newTestE2B(t, f, testKey)
	m, ok, err := c.LatestMetric(ctxT(t), "m")
	if err != nil || !ok || m.CPUUsedPct != 20.25 || m.MemUsed != 300<<20 || m.MemTotal != 512<<20 || !m.Time.Equal(now.Add(-5*time.Second)) {
		t.Fatalf("latest metric %+v %v %v", m, ok, err)
	}
	if _, ok, err := c.LatestMetric(ctxT(t), "fresh"); ok || err != nil {
		t.Fatalf("no samples yet: %v %v", ok, err)
	}
	logs, err := c.Logs(ctxT(t), "m", 1)
	if err != nil || len(logs) != 1 || logs[0].Message != "low memory" || logs[0].Level != "warn" {
		t.Fatalf("newest log line: %+v %v", logs, err)
	}
	logs, err = c.Logs(ctxT(t), "m", 100)
	if err != nil || len(logs) != 2 || logs[0].Message != "envd started" {
		t.Fatalf("logs oldest first: %+v %v", logs, err)
	}
	if _, err := c.Logs(ctxT(t), "m", 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
	if _, err := c.Logs(ctxT(t), "gone", 10); !errors.Is(err, ErrSandboxGone) {
		t.Fatalf("logs of an unknown sandbox: %v", err)
	}
	if calls := f.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("metrics and logs changed something: %+v", calls)
	}
}

func TestE2BProbeTellsGoneFromUnreachable(t *testing.T) {
	f := e2bfake.New(t, testKey)
	healthy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" && r.Header.Get("E2b-Sandbox-Id") == "sbxH" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(healthy.Close)
	f.Add(e2bfake.Sandbox{ID: "sbxH", EnvdURL: healthy.URL})
	c := newTestE2B(t, f, testKey)
	ctx := ctxT(t)

	_, conn, err := c.Describe(ctx, "sbxH")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c.Probe(ctx, conn); l != Alive || err != nil {
		t.Fatalf("healthy sandbox: %v %v", l, err)
	}

	// envd stops answering while the control plane still lists it: a fault.
	healthy.Close()
	l, err := c.Probe(ctx, conn)
	if l != Unreachable || err == nil || !strings.Contains(err.Error(), "listed as running") {
		t.Fatalf("dead envd, listed sandbox: %v %v", l, err)
	}

	// Paused: frozen, not gone; its groups must not be settled.
	f.Add(e2bfake.Sandbox{ID: "sbxH", State: "paused", EnvdURL: healthy.URL})
	if l, _ := c.Probe(ctx, conn); l != Paused {
		t.Fatalf("paused sandbox: %v", l)
	}

	// The control plane forgets it: gone.
	f.Remove("sbxH")
	if l, err := c.Probe(ctx, conn); l != Gone || err != nil {
		t.Fatalf("removed sandbox: %v %v", l, err)
	}

	// Neither envd nor the control plane answers: unreachable, not gone.
	down, err := NewClient(Config{APIKey: testKey, APIURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := down.Probe(ctx, conn); l != Unreachable || err == nil {
		t.Fatalf("control plane down: %v %v", l, err)
	}
}
