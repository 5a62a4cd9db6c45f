package target_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/backend/target"
)

const testKey = "e2b_00112233445566778899aabbccddeeff"

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeEnv points the E2B_* variables at f.
func fakeEnv(f *e2bfake.Fake, key string) func(string) string {
	env := map[string]string{"E2B_API_KEY": key, "E2B_API_URL": f.URL}
	return func(k string) string { return env[k] }
}

func TestTargetNothingNamed(t *testing.T) {
	if _, err := target.ListTargets(ctxT(t), target.Config{}); err == nil {
		t.Fatal("an empty config resolved to something")
	}
}

func TestTargetLocalAndEnvd(t *testing.T) {
	dir := t.TempDir()
	tokFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokFile, []byte("  s3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ts, err := target.ListTargets(ctxT(t), target.Config{
		Local:   "unix:/run/sandtop/daemon.sock",
		EnvdURL: "http://127.0.0.1:49983/", TokenFile: tokFile, User: "root",
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 {
		t.Fatalf("targets %v", ts)
	}
	if l := ts[0]; l.Name != "local" || l.Kind != target.KindLocal || l.Endpoint != "unix:/run/sandtop/daemon.sock" {
		t.Fatalf("local target %v", l)
	}
	e := ts[1]
	if e.Name != "envd:127.0.0.1:49983" || e.Kind != target.KindEnvd || e.Endpoint != "http://127.0.0.1:49983" ||
		e.Token != "s3cret-token" || e.User != "root" {
		t.Fatalf("envd target %v (token read: %v)", e, e.Token == "s3cret-token")
	}
	if s := fmt.Sprintf("%v %+v %#v", e, e, e); strings.Contains(s, "s3cret") {
		t.Fatalf("printing a target leaks its token: %s", s)
	}

	for name, cfg := range map[string]target.Config{
		"not http":       {EnvdURL: "ftp://host"},
		"no host":        {EnvdURL: "http://"},
		"credentials":    {EnvdURL: "http://me:pw@127.0.0.1:1"},
		"missing token":  {EnvdURL: "http://127.0.0.1:1", TokenFile: filepath.Join(dir, "absent")},
		"empty token":    {EnvdURL: "http://127.0.0.1:1", TokenFile: writeFile(t, dir, "empty", "\n")},
		"two-line token": {EnvdURL: "http://127.0.0.1:1", TokenFile: writeFile(t, dir, "two", "a\nb\n")},
	} {
		_, err := target.ListTargets(ctxT(t), cfg)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if strings.Contains(err.Error(), "pw@") {
			t.Errorf("%s: error leaks URL credentials: %v", name, err)
		}
	}
}

func writeFile(t *testing.T, dir, name, body string) string {
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTargetE2BWholeTeam(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "sbxB", Token: "tok-B", EnvdURL: "http://127.0.0.1:2"})
	f.Add(e2bfake.Sandbox{ID: "sbxA", Token: "tok-A", EnvdURL: "http://127.0.0.1:3"})
	f.Add(e2bfake.Sandbox{ID: "sbxZ", State: "paused"})
	ts, err := target.ListTargets(ctxT(t), target.Config{
		E2B: true, Getenv: fakeEnv(f, testKey),
		E2BConfig: e2b.Config{EnvdURLFor: f.EnvdURLFor},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 3 || ts[0].SandboxID != "sbxA" || ts[1].SandboxID != "sbxB" || ts[2].SandboxID != "sbxZ" {
		t.Fatalf("want the three sandboxes in id order, got %v", ts)
	}
	if z := ts[2]; !errors.Is(z.Err, target.ErrPaused) || z.Endpoint != "" || z.Token != "" || z.E2B == nil || !z.E2B.Paused() {
		t.Fatalf("the paused sandbox must be listed, paused, with nothing to dial: %v", z)
	}
	if calls := f.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("listing resumed or extended sandboxes: %+v", calls)
	}
	a := ts[0]
	if a.Name != "e2b:sbxA" || a.Kind != target.KindE2B || a.Endpoint != "http://127.0.0.1:3" || a.Token != "tok-A" ||
		a.User != "user" || a.Err != nil || a.EnvdVersion == "" {
		t.Fatalf("target %v", a)
	}
	if a.Cwd != "/home/user" || a.RuntimeRoot != "/home/user/.local/state/sandtop" || a.AgentWorkspace != "/home/user" {
		t.Fatalf("layout hints cwd %q root %q agent %q", a.Cwd, a.RuntimeRoot, a.AgentWorkspace)
	}
	if a.E2B == nil || a.E2B.TemplateID != "base" || a.E2B.EndAt.IsZero() {
		t.Fatalf("the listing's detail is kept: %+v", a.E2B)
	}
	if a.Headers.Get("E2b-Sandbox-Id") != "sbxA" || a.Headers.Get("E2b-Sandbox-Port") != "49983" {
		t.Fatalf("routing headers %v", a.Headers)
	}
}

func TestTargetE2BOneSandbox(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "sbxA", Token: "tok-A", EnvdURL: "http://127.0.0.1:3"})
	f.Add(e2bfake.Sandbox{ID: "sbxB", Token: "tok-B"})
	cfg := target.Config{E2BSandboxID: "sbxA", User: "root", Getenv: fakeEnv(f, testKey),
		E2BConfig: e2b.Config{EnvdURLFor: f.EnvdURLFor}}
	ts, err := target.ListTargets(ctxT(t), cfg)
	if err != nil || len(ts) != 1 || ts[0].SandboxID != "sbxA" || ts[0].User != "root" {
		t.Fatalf("%v %v", ts, err)
	}
	if f.Calls("GET /v2/sandboxes") != 0 {
		t.Fatal("naming one sandbox still listed the team")
	}
	cfg.E2BSandboxID = "gone"
	if _, err := target.ListTargets(ctxT(t), cfg); !errors.Is(err, e2b.ErrSandboxGone) {
		t.Fatalf("unknown sandbox: %v", err)
	}
	if calls := f.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("naming a sandbox resumed or extended it: %+v", calls)
	}
}

// TestTargetE2BLayoutAndFilter: a root user's home is /root; the layout
// settings override the defaults; the metadata filter reaches the
// control plane; Refresh sees a resume.
func TestTargetE2BLayoutAndFilter(t *testing.T) {
	f := e2bfake.New(t, testKey)
	f.Add(e2bfake.Sandbox{ID: "web", Token: "tok", Metadata: map[string]string{"app": "web"}})
	f.Add(e2bfake.Sandbox{ID: "db", State: "paused", Metadata: map[string]string{"app": "db"}})
	cfg := target.Config{E2B: true, User: "root", E2BMetadata: map[string]string{"app": "db"}, Getenv: fakeEnv(f, testKey),
		E2BConfig: e2b.Config{EnvdURLFor: f.EnvdURLFor}}
	ts, err := target.ListTargets(ctxT(t), cfg)
	if err != nil || len(ts) != 1 || ts[0].SandboxID != "db" {
		t.Fatalf("app=db: %v %v", ts, err)
	}
	if db := ts[0]; db.Cwd != "/root" || db.RuntimeRoot != "/root/.local/state/sandtop" || db.AgentWorkspace != "/root" {
		t.Fatalf("root layout: cwd %q root %q agent %q", db.Cwd, db.RuntimeRoot, db.AgentWorkspace)
	}
	if _, err := target.ListTargets(ctxT(t), target.Config{E2BSandboxID: "db", Getenv: fakeEnv(f, testKey)}); err != nil {
		t.Fatalf("naming a paused sandbox is not an error: %v", err)
	}
	if _, err := e2b.NewClient(e2b.Config{APIKey: testKey, APIURL: f.URL}); err != nil {
		t.Fatal(err)
	}
	c := target.Config{E2BSandboxID: "db", Getenv: fakeEnv(f, testKey), E2BConfig: e2b.Config{EnvdURLFor: f.EnvdURLFor}}
	ts, _ = target.ListTargets(ctxT(t), c)
	if _, err := ts[0].Provider().Resume(ctxT(t), "db", 0); err != nil {
		t.Fatal(err)
	}
	now, err := target.Refresh(ctxT(t), ts[0])
	if err != nil || now.Err != nil || now.Endpoint == "" || now.E2B.Paused() {
		t.Fatalf("after resume: %v %v", now, err)
	}

	cfg = target.Config{E2BSandboxID: "web", Cwd: "/srv", RuntimeRoot: "/var/lib/st", AgentWorkspace: "/work", Getenv: fakeEnv(f, testKey)}
	ts, err = target.ListTargets(ctxT(t), cfg)
	if err != nil || ts[0].Cwd != "/srv" || ts[0].RuntimeRoot != "/var/lib/st" || ts[0].AgentWorkspace != "/work" {
		t.Fatalf("overrides: %v %v", ts, err)
	}
}

func TestTargetE2BUnusualKeyWarns(t *testing.T) {
	const key = "sk_test_123"
	f := e2bfake.New(t, key)
	f.Add(e2bfake.Sandbox{ID: "sbx1"})
	var warned []string
	ts, err := target.ListTargets(ctxT(t), target.Config{E2B: true, Getenv: fakeEnv(f, key), Warn: func(s string) { warned = append(warned, s) }})
	if err != nil || len(ts) != 1 {
		t.Fatalf("%v %v", ts, err)
	}
	if len(warned) != 1 || strings.Contains(warned[0], key) {
		t.Fatalf("warnings %q", warned)
	}
}

func TestTargetE2BWrongKey(t *testing.T) {
	f := e2bfake.New(t, testKey)
	_, err := target.ListTargets(ctxT(t), target.Config{E2B: true, Getenv: fakeEnv(f, "e2b_abcdef")})
	if !errors.Is(err, e2b.ErrAuth) || err.Error() != "e2b: API key rejected (401): check E2B_API_KEY" {
		t.Fatalf("wrong key: %v", err)
	}
	_, err = target.ListTargets(ctxT(t), target.Config{E2B: true, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "E2B_API_KEY is not set") {
		t.Fatalf("no key: %v", err)
	}
}
