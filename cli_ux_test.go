package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestConfigCheckRefusesWhatTheTUIRefuses: config check and plain sandtop
// run one validation, so check never says ok to a file the TUI refuses.
func TestConfigCheckRefusesWhatTheTUIRefuses(t *testing.T) {
	dir := t.TempDir()
	themeDir := filepath.Join(dir, "xdg", "sandtop", "themes")
	if err := os.MkdirAll(themeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	dark, err := os.ReadFile("themes/dark.toml")
	if err != nil {
		t.Fatal(err)
	}
	mine := strings.Replace(string(dark), `name = "dark"`, `name = "mine"`, 1)
	if err := os.WriteFile(filepath.Join(themeDir, "mine.toml"), []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, config, want string // want "" means ok
	}{
		{"unknown theme", `theme = "solarized"`, `theme "solarized" not found`},
		{"unknown key action", "[keys]\nfrobnicate = [\"f9\"]", `unknown action "frobnicate"`},
		{"unknown target", `target = "prod"`, `names no [targets.prod]`},
		{"user theme", `theme = "mine"` + "\nmouse = true", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".toml")
			if err := os.WriteFile(cfg, []byte(c.config+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(append([]string(nil), testEnv...), "SANDTOP_CONFIG="+cfg, "XDG_CONFIG_HOME="+filepath.Join(dir, "xdg"))
			check := sandtopEnv(t, env, "config", "check")
			// The TUI refuses before it needs a terminal; without one it
			// says so instead, which means it accepted the config.
			tui := sandtopEnv(t, env)
			if c.want == "" {
				if check.code != 0 || !strings.Contains(tui.stderr, "needs a terminal") {
					t.Fatalf("check: %d %s; tui: %s", check.code, check.stderr, tui.stderr)
				}
				return
			}
			if check.code == 0 || !strings.Contains(check.stderr, c.want) {
				t.Fatalf("config check: exit %d, stderr %q; want it to name %q", check.code, check.stderr, c.want)
			}
			if tui.code == 0 || !strings.Contains(tui.stderr, c.want) {
				t.Fatalf("sandtop: exit %d, stderr %q; want it to name %q", tui.code, tui.stderr, c.want)
			}
		})
	}
}
