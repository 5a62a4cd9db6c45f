package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/config"
)

// parseTargets parses target flags as the root command would.
func parseTargets(t *testing.T, args ...string) *targetFlags {
	t.Helper()
	tf := &targetFlags{}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	tf.register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return tf
}

func TestTargetsRepeatForTheTUI(t *testing.T) {
	cfg := config.Defaults()
	sels, err := parseTargets(t, "--socket", "a.sock", "--socket", "b.sock", "--envd", "http://h:1", "--token-file", "/tok").resolveAll(cfg)
	if err != nil || len(sels) != 3 {
		t.Fatalf("sels %+v, %v", sels, err)
	}
	if sels[0].name != "socket:a.sock" || sels[1].name != "socket:b.sock" || sels[2].name != "envd:h:1" || sels[2].cfg.TokenFile != "/tok" || sels[0].cfg.TokenFile != "" {
		t.Fatalf("sels %+v", sels)
	}
	if _, err := parseTargets(t, "--socket", "a", "--socket", "b").resolve(cfg); err == nil || !strings.Contains(err.Error(), "only one target") {
		t.Fatalf("a one-sandbox command took two: %v", err)
	}
	if _, err := parseTargets(t, "--socket", "a", "--socket", "a").resolveAll(cfg); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("a repeated target was accepted: %v", err)
	}
}

func TestTUIShowsLocalAndEveryConfiguredTarget(t *testing.T) {
	cfg, err := config.Parse("c.toml", []byte("target = \"sock\"\n[targets.box]\nenvd = \"http://box:49983\"\n[targets.sock]\nsocket = \"/s.sock\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	sels, initial, err := allConfigured(cfg)
	if err != nil || len(sels) != 3 || sels[0].name != "local" || sels[1].name != "box" || sels[2].name != "sock" || initial != 2 {
		t.Fatalf("sels %+v initial %d: %v", sels, initial, err)
	}
}

func TestE2BFlag(t *testing.T) {
	cfg := config.Defaults()
	sels, err := parseTargets(t, "--e2b").resolveAll(cfg)
	if err != nil || len(sels) != 1 || !sels[0].cfg.E2B || !sels[0].expands {
		t.Fatalf("--e2b: %+v %v", sels, err)
	}
	sels, err = parseTargets(t, "--e2b=sbx1", "--socket", "/a").resolveAll(cfg)
	if err != nil || len(sels) != 2 || sels[1].cfg.E2BSandboxID != "sbx1" {
		t.Fatalf("--e2b=ID: %+v %v", sels, err)
	}
	if _, err := parseTargets(t, "--e2b=").resolveAll(cfg); err == nil {
		t.Fatal("--e2b= with no id was accepted")
	}
	if sels, err := parseTargets(t).resolveAll(cfg); err != nil || len(sels) != 0 {
		t.Fatalf("no flags: %+v %v", sels, err)
	}
	sels, err = parseTargets(t, "--e2b-metadata", "app=web", "--e2b-metadata", "env=a=b").resolveAll(cfg)
	if err != nil || len(sels) != 1 || !sels[0].cfg.E2B || sels[0].cfg.E2BMetadata["app"] != "web" || sels[0].cfg.E2BMetadata["env"] != "a=b" {
		t.Fatalf("--e2b-metadata implies --e2b and filters: %+v %v", sels, err)
	}
	for _, bad := range [][]string{{"--e2b-metadata", "novalue"}, {"--e2b-metadata", "=v"}, {"--e2b=sbx1", "--e2b-metadata", "a=b"}} {
		if _, err := parseTargets(t, bad...).resolveAll(cfg); err == nil {
			t.Errorf("%v was accepted", bad)
		}
	}
}

// TestE2BConfigTargetHasItsOwnKey: [targets.NAME] e2b = "ID" with its own
// key file and API URL, no E2B_API_KEY in the environment; the sandbox
// keeps the config's name.
func TestE2BConfigTargetHasItsOwnKey(t *testing.T) {
	const key = "provider-key-42"
	fake := e2bfake.New(t, key)
	fake.Add(e2bfake.Sandbox{ID: "sbx9", Alias: "box"})
	t.Setenv("E2B_API_KEY", "")
	t.Setenv("E2B_API_URL", "")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "e2b.key"), []byte(key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	body := "[targets.agent]\ne2b = \"sbx9\"\ne2b_api_key_file = \"e2b.key\"\ne2b_api_url = \"" + fake.URL + "\"\n" +
		"[targets.broken]\ne2b = \"sbx9\"\ne2b_api_key_file = \"absent.key\"\n"
	cfg, err := config.Parse(filepath.Join(dir, "config.toml"), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := namedTarget(cfg, "agent")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := sel.targets(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Name != "agent" || ts[0].E2B == nil || ts[0].E2B.Alias != "box" {
		t.Fatalf("targets %v: %v", ts, err)
	}
	broken, err := namedTarget(cfg, "broken")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := broken.targets(context.Background()); err == nil || !strings.Contains(err.Error(), "e2b_api_key_file") {
		t.Fatalf("an unreadable key file: %v", err)
	}
	if calls := fake.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("resolving changed the sandbox: %+v", calls)
	}
}

// TestE2BListingShowsTheSandbox lists a fake E2B team (E2B_API_URL at the
// fake control plane, E2B_SANDBOX_URL at a daemon in stock-envd mode) and
// checks the TUI gets the sandbox in a form it can open.
func TestE2BListingShowsTheSandbox(t *testing.T) {
	const key = "e2b_0123456789abcdef0123456789abcdef01234567"
	env := daemontest.StartTCP(t, daemon.Config{Compat: true, Token: "envd-token"})
	fake := e2bfake.New(t, key)
	fake.Add(e2bfake.Sandbox{ID: "isb7x2k", EnvdURL: env.Addr, Token: env.Token})
	t.Setenv("E2B_API_KEY", key)
	t.Setenv("E2B_API_URL", fake.URL)
	t.Setenv("E2B_SANDBOX_URL", env.Addr)

	sels, err := parseTargets(t, "--e2b").resolveAll(config.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	o := &tuiOpener{cfg: config.Defaults()}
	defer o.closeAll()
	contexts, _ := o.specs(ctx, sels, 0)
	if len(contexts) != 1 {
		t.Fatalf("contexts %+v", contexts)
	}
	c := contexts[0]
	// Listed, not described: its envd address is known once it is opened.
	if c.Name != "e2b:isb7x2k" || c.Kind != "e2b" || c.Target != "e2b sandbox isb7x2k" || c.Err != nil || c.Open == nil {
		t.Fatalf("context %+v", c)
	}
	src, err := c.Open(ctx)
	if err != nil {
		t.Fatalf("open the E2B sandbox: %v", err)
	}
	info, err := src.Info(ctx)
	if err != nil || info.Name != "e2b:isb7x2k" || info.Target != env.Addr {
		t.Fatalf("info %+v, %v", info, err)
	}
}

func TestUnresolvableTargetIsAContextInError(t *testing.T) {
	sels, err := parseTargets(t, "--socket", "/a.sock", "--envd", "http://h:1", "--token-file", "/no/such/token").resolveAll(config.Defaults())
	if err != nil {
		t.Fatal(err)
	}
	o := &tuiOpener{cfg: config.Defaults()}
	contexts, _ := o.specs(context.Background(), sels, 0)
	if len(contexts) != 2 || contexts[0].Err != nil || contexts[1].Err == nil || contexts[1].Open == nil {
		t.Fatalf("contexts %+v", contexts)
	}
}
