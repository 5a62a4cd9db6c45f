package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolvePathsPrecedence(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	p, err := ResolvePaths(get)
	if err != nil {
		t.Fatal(err)
	}
	if p.StateDir != "/home/u/.local/state/sandtop" || !strings.HasPrefix(filepath.Base(p.RuntimeDir), "sandtop-") {
		t.Fatalf("fallbacks: %+v", p)
	}
	env["XDG_RUNTIME_DIR"], env["XDG_STATE_HOME"] = "/run/user/7", "/xdg/state"
	if p, _ = ResolvePaths(get); p.RuntimeDir != "/run/user/7/sandtop" || p.StateDir != "/xdg/state/sandtop" {
		t.Fatalf("xdg: %+v", p)
	}
	env[EnvRuntimeDir], env[EnvStateDir] = "/r", "/s"
	if p, _ = ResolvePaths(get); p.RuntimeDir != "/r" || p.StateDir != "/s" || p.Target() != "unix:/r/daemon.sock" {
		t.Fatalf("overrides: %+v", p)
	}
	env[EnvRuntimeDir] = "/" + strings.Repeat("x", 120)
	if _, err := ResolvePaths(get); err == nil || !strings.Contains(err.Error(), EnvRuntimeDir) {
		t.Fatalf("an over-long socket path must be refused, naming the override: %v", err)
	}
}

func TestPrepareMakesTheRuntimeDirPrivate(t *testing.T) {
	dir := t.TempDir()
	p := Paths{RuntimeDir: filepath.Join(dir, "run"), StateDir: filepath.Join(dir, "state")}
	if err := os.MkdirAll(p.RuntimeDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p.RuntimeDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("runtime dir mode %v (%v), want 0700", fi.Mode().Perm(), err)
	}
	link := Paths{RuntimeDir: filepath.Join(dir, "link"), StateDir: p.StateDir}
	if err := os.Symlink(p.RuntimeDir, link.RuntimeDir); err != nil {
		t.Fatal(err)
	}
	if err := link.Prepare(); err == nil {
		t.Fatal("a symlinked runtime dir must be refused")
	}
}

func TestCuratedEnvKeepsOnlyTheBasics(t *testing.T) {
	got := CuratedEnv([]string{"PATH=/bin", "HOME=/h", "AWS_SECRET_ACCESS_KEY=x", "E2B_API_KEY=x", "LC_ALL=C",
		"LC_AUTH_TOKEN=x", "SSH_AUTH_SOCK=/s", "EDITOR=vi", "malformed", "=x"})
	want := "PATH=/bin HOME=/h LC_ALL=C"
	if strings.Join(got, " ") != want {
		t.Fatalf("CuratedEnv = %q, want %q", got, want)
	}
}
