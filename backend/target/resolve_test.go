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

	"sandtop/backend/envd"
	"sandtop/backend/envd/e2bfake"
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
		E2BConfig: envd.E2BConfig{EnvdURLFor: f.EnvdURLFor},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(ts) != 2 || ts[0].SandboxID != "sbxA" || ts[1].SandboxID != "sbxB" {
		t.Fatalf("want the two running sandboxes in id order, got %v", ts)
	}
	a := ts[0]
	if a.Name != "e2b:sbxA" || a.Kind != target.KindE2B || a.Endpoint != "http://127.0.0.1:3" || a.Token != "tok-A" ||
		a.User != "user" || a.Err != nil || a.EnvdVersion == "" {
		t.Fatalf("target %v", a)
	}
	if a.Cwd != "/home/user/workspace" || a.RuntimeRoot != "/home/user/workspace/.sandtop" || a.AgentWorkspace != "/home/user/workspace" {
		t.Fatalf("layout hints cwd %q root %q agent %q", a.Cwd, a.RuntimeRoot, a.AgentWorkspace)
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
		E2BConfig: envd.E2BConfig{EnvdURLFor: f.EnvdURLFor}}
	ts, err := target.ListTargets(ctxT(t), cfg)
	if err != nil || len(ts) != 1 || ts[0].SandboxID != "sbxA" || ts[0].User != "root" {
		t.Fatalf("%v %v", ts, err)
	}
	if f.Calls("GET /v2/sandboxes") != 0 {
		t.Fatal("naming one sandbox still listed the team")
	}
	cfg.E2BSandboxID = "gone"
	if _, err := target.ListTargets(ctxT(t), cfg); !errors.Is(err, envd.ErrE2BSandboxGone) {
		t.Fatalf("unknown sandbox: %v", err)
	}
}

func TestTargetE2BWrongKey(t *testing.T) {
	f := e2bfake.New(t, testKey)
	_, err := target.ListTargets(ctxT(t), target.Config{E2B: true, Getenv: fakeEnv(f, "e2b_abcdef")})
	if !errors.Is(err, envd.ErrE2BAuth) || err.Error() != "e2b: API key rejected (401): check E2B_API_KEY" {
		t.Fatalf("wrong key: %v", err)
	}
	_, err = target.ListTargets(ctxT(t), target.Config{E2B: true, Getenv: func(string) string { return "" }})
	if err == nil || !strings.Contains(err.Error(), "E2B_API_KEY is not set") {
		t.Fatalf("no key: %v", err)
	}
}
