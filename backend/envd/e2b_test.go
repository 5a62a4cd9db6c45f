package envd_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"sandtop/backend/envd"
	"sandtop/backend/envd/e2bfake"
)

const testKey = "e2b_0123456789abcdef0123456789abcdef"

func newTestE2B(t *testing.T, f *e2bfake.Fake, key string) *envd.E2BClient {
	t.Helper()
	c, err := envd.NewE2BClient(envd.E2BConfig{APIKey: key, APIURL: f.URL, EnvdURLFor: f.EnvdURLFor})
	if err != nil {
		t.Fatalf("NewE2BClient: %v", err)
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
	cfg := envd.E2BConfigFromEnv(func(k string) string { return env[k] })
	c, err := envd.NewE2BClient(cfg)
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
	c, _ = envd.NewE2BClient(envd.E2BConfigFromEnv(func(k string) string { return env[k] }))
	if c.Config().APIURL != "https://api.example.test" {
		t.Fatalf("api URL follows E2B_DOMAIN: %q", c.Config().APIURL)
	}
	env["E2B_API_URL"] = "http://127.0.0.1:9/"
	env["E2B_SANDBOX_URL"] = "http://127.0.0.1:8/"
	c, _ = envd.NewE2BClient(envd.E2BConfigFromEnv(func(k string) string { return env[k] }))
	if c.Config().APIURL != "http://127.0.0.1:9" || c.EnvdURL("x", "") != "http://127.0.0.1:8" {
		t.Fatalf("overrides: api %q envd %q", c.Config().APIURL, c.EnvdURL("x", ""))
	}

	debug := map[string]string{"E2B_API_KEY": testKey, "E2B_DEBUG": "TRUE"}
	c, _ = envd.NewE2BClient(envd.E2BConfigFromEnv(func(k string) string { return debug[k] }))
	if c.Config().APIURL != "http://localhost:3000" || c.EnvdURL("x", "") != "http://localhost:49983" {
		t.Fatalf("debug mode: api %q envd %q", c.Config().APIURL, c.EnvdURL("x", ""))
	}
}

func TestE2BKeyMissingOrMalformed(t *testing.T) {
	if _, err := envd.NewE2BClient(envd.E2BConfig{}); err == nil || !strings.Contains(err.Error(), "E2B_API_KEY is not set") {
		t.Fatalf("missing key: %v", err)
	}
	_, err := envd.NewE2BClient(envd.E2BConfig{APIKey: "sk-secret-value"})
	if err == nil || !strings.Contains(err.Error(), "malformed") || strings.Contains(err.Error(), "sk-secret-value") {
		t.Fatalf("malformed key: %v", err)
	}
}

func TestE2BWrongKeyIsOneClearLine(t *testing.T) {
	f := e2bfake.New(t, testKey)
	wrong := "e2b_ffffffffffffffffffffffffffffffff"
	c := newTestE2B(t, f, wrong)
	_, err := c.ListRunning(ctxT(t))
	if !errors.Is(err, envd.ErrE2BAuth) {
		t.Fatalf("want ErrE2BAuth, got %v", err)
	}
	want := "e2b: API key rejected (401): check E2B_API_KEY"
	if err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
	if strings.Contains(err.Error(), wrong) {
		t.Fatal("the error leaks the key")
	}
	if _, err := c.Connect(ctxT(t), "sbx"); !errors.Is(err, envd.ErrE2BAuth) {
		t.Fatalf("connect with a wrong key: %v", err)
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

func TestE2BConnectAndGet(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "sbxA", Token: "envd-secret-A", EnvdURL: "http://127.0.0.1:7"})
	f.Add(e2bfake.Sandbox{ID: "sbxP", State: "paused", Token: "envd-secret-P"})
	c := newTestE2B(t, f, testKey)

	conn, err := c.Connect(ctxT(t), "sbxA")
	if err != nil {
		t.Fatal(err)
	}
	if conn.SandboxID != "sbxA" || conn.AccessToken != "envd-secret-A" || conn.EnvdURL != "http://127.0.0.1:7" ||
		conn.Domain != e2bfake.Domain || conn.EnvdVersion != "0.6.13" {
		t.Fatalf("connection %+v", conn)
	}
	if f.LastConnectTimeout("sbxA") != 300 {
		t.Fatalf("connect asked for a TTL of %d s, want the SDK default 300", f.LastConnectTimeout("sbxA"))
	}
	for _, s := range []string{conn.String(), fmt.Sprintf("%v %+v %#v", conn, conn, conn)} {
		if strings.Contains(s, "envd-secret") {
			t.Fatalf("printing a connection leaks its token: %s", s)
		}
	}

	// Connect resumes a paused sandbox.
	if _, err := c.Connect(ctxT(t), "sbxP"); err != nil {
		t.Fatal(err)
	}
	if sb, err := c.Get(ctxT(t), "sbxP"); err != nil || sb.State != "running" || sb.Domain != e2bfake.Domain {
		t.Fatalf("after connect: %+v %v", sb, err)
	}

	for _, call := range []func() error{
		func() error { _, err := c.Connect(ctxT(t), "nope"); return err },
		func() error { _, err := c.Get(ctxT(t), "nope"); return err },
		func() error { return c.Kill(ctxT(t), "nope") },
	} {
		if err := call(); !errors.Is(err, envd.ErrE2BSandboxGone) || !strings.Contains(err.Error(), "nope") {
			t.Fatalf("unknown sandbox: %v", err)
		}
	}
	if _, err := c.Connect(ctxT(t), "../x"); err == nil {
		t.Fatal("a sandbox id with a slash was accepted")
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

	conn, err := c.Connect(ctx, "sbxH")
	if err != nil {
		t.Fatal(err)
	}
	if l, err := c.Probe(ctx, conn); l != envd.E2BAlive || err != nil {
		t.Fatalf("healthy sandbox: %v %v", l, err)
	}

	// envd stops answering while the control plane still lists it: a fault.
	healthy.Close()
	l, err := c.Probe(ctx, conn)
	if l != envd.E2BUnreachable || err == nil || !strings.Contains(err.Error(), "listed as running") {
		t.Fatalf("dead envd, listed sandbox: %v %v", l, err)
	}

	// The control plane forgets it: gone.
	f.Remove("sbxH")
	if l, err := c.Probe(ctx, conn); l != envd.E2BGone || err != nil {
		t.Fatalf("removed sandbox: %v %v", l, err)
	}

	// Neither envd nor the control plane answers: unreachable, not gone.
	down, err := envd.NewE2BClient(envd.E2BConfig{APIKey: testKey, APIURL: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if l, err := down.Probe(ctx, conn); l != envd.E2BUnreachable || err == nil {
		t.Fatalf("control plane down: %v %v", l, err)
	}
}
