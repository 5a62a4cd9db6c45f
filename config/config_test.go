package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const example = `
target = "staging"
theme = "light"
read_only = true
scrollback_bytes = 2097152
grace = "10s"

[targets.staging]
envd = "http://10.0.0.5:49983"
token_file = "staging.token"
read_only = false

[targets.box]
socket = "~/box.sock"

[keys]
detach = ["ctrl+g"]

[confirm]
signal = false
`

func TestParseExampleOverridesDefaults(t *testing.T) {
	c, err := Parse("/etc/sandtop/config.toml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if c.Target != "staging" || c.Theme != "light" || !c.ReadOnly || c.ScrollbackBytes != 2<<20 || c.Grace != 10*time.Second {
		t.Fatalf("top-level values not applied: %+v", c)
	}
	if got := c.Targets["staging"].TokenFile; got != "/etc/sandtop/staging.token" {
		t.Fatalf("relative token file resolved to %q", got)
	}
	if home, _ := os.UserHomeDir(); c.Targets["box"].Socket != filepath.Join(home, "box.sock") {
		t.Fatalf("~ not expanded: %q", c.Targets["box"].Socket)
	}
	if c.ReadOnlyFor("staging") || !c.ReadOnlyFor("box") {
		t.Fatal("per-target read_only must override the top-level one")
	}
	if c.Confirm.Signal || !c.Confirm.Teardown {
		t.Fatalf("confirm: unset keys must keep their defaults: %+v", c.Confirm)
	}
	if got := c.Keys["detach"]; len(got) != 1 || got[0] != "ctrl+g" {
		t.Fatalf("keys: %v", got)
	}
}

func TestE2BTargets(t *testing.T) {
	c, err := Parse("/etc/sandtop/config.toml", []byte(`
[targets.agent]
e2b = "isb7x2k"
e2b_api_key_file = "e2b.key"
e2b_domain = "eu.example.test"
agent_workspace = "/home/user/workspace"
runtime_root = "/home/user/.local/state/sandtop"

[targets.web]
e2b_metadata = { app = "web", env = "prod" }
`))
	if err != nil {
		t.Fatal(err)
	}
	a, w := c.Targets["agent"], c.Targets["web"]
	if !a.IsE2B() || a.E2B != "isb7x2k" || a.E2BAPIKeyFile != "/etc/sandtop/e2b.key" || a.E2BDomain != "eu.example.test" ||
		a.AgentWorkspace != "/home/user/workspace" || a.RuntimeRoot != "/home/user/.local/state/sandtop" {
		t.Fatalf("agent: %+v", a)
	}
	if !w.IsE2B() || w.E2BMetadata["app"] != "web" || w.E2BMetadata["env"] != "prod" {
		t.Fatalf("web: %+v", w)
	}
}

func TestMissingFileGivesDefaults(t *testing.T) {
	c, err := Load(filepath.Join(t.TempDir(), "none.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Target != LocalTarget || c.Theme != "dark" || !c.Confirm.Teardown {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestBadFilesNameWhatIsWrong(t *testing.T) {
	cases := map[string]string{
		"unknown key":        "colour = \"red\"\n",
		"syntax":             "theme = \n",
		"target missing":     "target = \"prod\"\n",
		"both endpoints":     "[targets.x]\nsocket = \"/s\"\nenvd = \"http://h:1\"\n",
		"no endpoint":        "[targets.x]\nuser = \"root\"\n",
		"bad url":            "[targets.x]\nenvd = \"10.0.0.5:49983\"\n",
		"local redefined":    "[targets.local]\nsocket = \"/s\"\n",
		"scrollback too big": "scrollback_bytes = 9999999999\n",
		"empty key list":     "[keys]\nquit = []\n",
		"bad duration":       "grace = \"soon\"\n",
		"e2b and envd":       "[targets.x]\ne2b = \"sbx1\"\nenvd = \"http://h:1\"\n",
		"e2b id and filter":  "[targets.x]\ne2b = \"sbx1\"\ne2b_metadata = { app = \"web\" }\n",
		"e2b key on envd":    "[targets.x]\nenvd = \"http://h:1\"\ne2b_api_key_file = \"k\"\n",
		"relative root":      "[targets.x]\ne2b = \"sbx1\"\nruntime_root = \"state\"\n",
		"bad e2b api url":    "[targets.x]\ne2b = \"sbx1\"\ne2b_api_url = \"api.example\"\n",
		"kube and envd":      "[targets.x]\nenvd = \"http://h:1\"\nkube = { selector = \"app=a\" }\n",
		"kube both ns":       "[targets.x]\nkube = { namespace = \"a\", all_namespaces = true }\n",
		"kube unknown key":   "[targets.x]\nkube = { selecter = \"app=a\" }\n",
		"kube with user":     "[targets.x]\nuser = \"root\"\nkube = { }\n",
	}
	want := map[string]string{
		"unknown key": "unknown key colour", "syntax": "line 1", "target missing": `"prod"`,
		"both endpoints": "only one", "no endpoint": "either socket, envd, e2b (or e2b_metadata) or kube", "bad url": "not an http",
		"local redefined": "built-in", "scrollback too big": "scrollback_bytes", "empty key list": "quit",
		"bad duration": "grace",
		"e2b and envd": "only one", "e2b id and filter": "e2b_metadata", "e2b key on envd": "go with e2b",
		"relative root": "runtime_root", "bad e2b api url": "e2b_api_url",
		"kube and envd": "only one", "kube both ns": "all_namespaces", "kube unknown key": "targets.x.kube.selecter",
		"kube with user": "user does not go with kube",
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(body))
			if err == nil {
				t.Fatal("want an error")
			}
			if msg := err.Error(); !strings.Contains(msg, want[name]) || !strings.HasPrefix(msg, "config c.toml") || strings.Contains(msg, "\n") {
				t.Fatalf("error %q should be one line naming the file and %q", msg, want[name])
			}
		})
	}
}

func TestPathPrecedence(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	get := func(k string) string { return env[k] }
	if p, _ := Path(get); p != "/home/u/.config/sandtop/config.toml" {
		t.Fatalf("home fallback: %s", p)
	}
	env["XDG_CONFIG_HOME"] = "/xdg"
	if p, _ := Path(get); p != "/xdg/sandtop/config.toml" {
		t.Fatalf("xdg: %s", p)
	}
	env[EnvConfig] = "/explicit.toml"
	if p, _ := Path(get); p != "/explicit.toml" {
		t.Fatalf("override: %s", p)
	}
	if _, err := Path(func(string) string { return "" }); err == nil {
		t.Fatal("no HOME and no XDG must be an error")
	}
}

func TestStuckSection(t *testing.T) {
	c, err := Parse("c.toml", []byte("[stuck]\nafter = \"3m\"\nspin_cpu = 80.0\n"))
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Stuck.Rules(); r.After != 3*time.Minute || r.SpinCPU != 80 || r.IdleCPU != 1 {
		t.Fatalf("rules %+v; want after 3m, spin 80, idle the default 1", r)
	}
	if r := Defaults().Stuck.Rules(); r.After != 10*time.Minute || r.IdleCPU != 1 || r.SpinCPU != 95 {
		t.Fatalf("default rules %+v", r)
	}
	for _, tc := range []struct{ toml, want string }{
		{"[stuck]\nafter = \"0s\"\n", "[stuck]: stuck: after must be a positive duration"},
		{"[stuck]\nidle_cpu = 96.0\n", "idle_cpu must be below spin_cpu"},
		{"[stuck]\nafter = \"soon\"\n", "c.toml"},
		{"[stuck]\nidle = 1.0\n", "unknown key stuck.idle"},
	} {
		_, err := Parse("c.toml", []byte(tc.toml))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v; want %q", tc.toml, err, tc.want)
		}
	}
}

func TestKubeTargetTable(t *testing.T) {
	c, err := Parse("/etc/sandtop/c.toml", []byte("[targets.agents]\ntoken_file = \"tok\"\nkube = { context = \"prod\", namespace = \"agents\", selector = \"app=agent\", token_secret = \"sandtop-token\", kubeconfig = \"kc\" }\n"))
	if err != nil {
		t.Fatal(err)
	}
	k := c.Targets["agents"].Kube
	want := Kube{Kubeconfig: "/etc/sandtop/kc", Context: "prod", Namespace: "agents", Selector: "app=agent", TokenSecret: "sandtop-token"}
	if k == nil || *k != want {
		t.Fatalf("kube table = %+v; want %+v", k, want)
	}
	if tf := c.Targets["agents"].TokenFile; tf != "/etc/sandtop/tok" {
		t.Fatalf("token_file = %q", tf)
	}
}
