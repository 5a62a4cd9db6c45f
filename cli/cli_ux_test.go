package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
	"sandtop/wrapper"
)

// TestConfigCheckRefusesWhatTheTUIRefuses: config check and plain sandtop
// run one validation, so check never says ok to a file the TUI refuses.
func TestConfigCheckRefusesWhatTheTUIRefuses(t *testing.T) {
	dir := t.TempDir()
	themeDir := filepath.Join(dir, "xdg", "sandtop", "themes")
	if err := os.MkdirAll(themeDir, 0o700); err != nil {
		t.Fatal(err)
	}
	dark, err := os.ReadFile("../themes/dark.toml")
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

// TestCompletionListsLiveGroups: "sandtop kill <tab>" offers the live
// pgids (with what they run), signal offers names first, ls -o its formats.
func TestCompletionListsLiveGroups(t *testing.T) {
	pgid := runDetached(t, "sleep", "4711")
	defer sandtop(t, "kill", "--grace", "500ms", strconv.Itoa(pgid))
	out := mustSandtop(t, "__complete", "kill", "")
	if !strings.Contains(out, strconv.Itoa(pgid)+"\tsleep 4711") {
		t.Fatalf("kill completion lacks pgid %d:\n%s", pgid, out)
	}
	if !strings.HasSuffix(strings.TrimSpace(out), ":4") {
		t.Fatalf("kill completion falls back to file names:\n%s", out)
	}
	if out := mustSandtop(t, "__complete", "signal", ""); !strings.HasPrefix(out, "TERM\n") || !strings.Contains(out, "\nUSR1\n") {
		t.Fatalf("signal completion:\n%s", out)
	}
	if out := mustSandtop(t, "__complete", "signal", "TERM", ""); !strings.Contains(out, strconv.Itoa(pgid)+"\t") {
		t.Fatalf("signal's pgid completion:\n%s", out)
	}
	if out := mustSandtop(t, "__complete", "ls", "-o", ""); !strings.Contains(out, "wide\nname\njson\n") {
		t.Fatalf("-o completion:\n%s", out)
	}
	if out := mustSandtop(t, "__complete", "--theme", ""); !strings.Contains(out, "high-contrast\n") {
		t.Fatalf("--theme completion:\n%s", out)
	}
	if out := mustSandtop(t, "__complete", "ls", "--target", ""); !strings.HasPrefix(out, "local\n") {
		t.Fatalf("--target completion:\n%s", out)
	}
}

// TestListJSONCarriesStartAndNotTheScript: started is set, the wrapper's
// members carry a marker instead of its script, and "<" is not escaped.
func TestListJSONCarriesStartAndNotTheScript(t *testing.T) {
	before := time.Now().Add(-time.Second)
	pgid := runDetached(t, "bash", "-c", "sleep 4712 < /dev/null; :")
	defer sandtop(t, "kill", "--grace", "500ms", strconv.Itoa(pgid))
	var raw string
	var g listGroup
	testwait.For(t, 10*time.Second, "the group listed with its started time", func() bool {
		raw = mustSandtop(t, "ls", "-o", "json")
		var ok bool
		g, ok = findGroup(decodeList(t, raw), pgid)
		return ok && g.Started != nil
	})
	if g.Started.Before(before) || g.Started.After(time.Now()) {
		t.Fatalf("started = %s, want after %s", g.Started, before)
	}
	if !strings.Contains(raw, "sleep 4712 < /dev/null") || strings.Contains(raw, `\u003c`) {
		t.Fatalf("'<' is escaped in the JSON")
	}
	// On sandtop's daemon a shim, not a bash wrapper, runs the group, so
	// there may be no wrapper member at all; where there is one (stock
	// envd), it carries the marker, never the script.
	for _, m := range g.Members {
		for _, a := range m.Argv {
			if len(a) > 200 {
				t.Fatalf("member %d carries the wrapper script (%d bytes)", m.PID, len(a))
			}
		}
		if m.Wrapper && m.PID == pgid && strings.Join(m.Argv, " ") != "bash "+wrapper.ArgvMarker {
			t.Fatalf("wrapper leader argv = %q, want the marker", m.Argv)
		}
	}
}

// TestListFiltersAndFormats: --tag and --state narrow every format; -o
// name prints pgids; --no-headers drops the header; kill takes several.
func TestListFiltersAndFormats(t *testing.T) {
	a := runTagged(t, "ux-a", "sleep", "4713")
	b := runTagged(t, "ux-b", "sleep", "4714")
	if out := mustSandtop(t, "ls", "-o", "name", "--tag", "ux-*", "--state", "running"); out != fmt.Sprintf("%d\n%d\n", a, b) && out != fmt.Sprintf("%d\n%d\n", b, a) {
		t.Fatalf("-o name --tag ux-*:\n%s", out)
	}
	out := mustSandtop(t, "ls", "-o", "wide", "--no-headers", "--tag", "ux-a")
	if strings.Contains(out, "PGID") || !strings.HasPrefix(out, strconv.Itoa(a)+" ") || strings.Contains(out, strconv.Itoa(b)) {
		t.Fatalf("-o wide --no-headers --tag ux-a:\n%s", out)
	}
	if r := sandtop(t, "ls", "--state", "sleeping"); r.code != exitUsage {
		t.Fatalf("--state sleeping: exit %d", r.code)
	}
	if out := mustSandtop(t, "signal", "CONT", strconv.Itoa(a), strconv.Itoa(b)); strings.Count(out, "sent SIGCONT") != 2 {
		t.Fatalf("signal to two groups:\n%s", out)
	}
	mustSandtop(t, "kill", "--grace", "500ms", strconv.Itoa(a), strconv.Itoa(b))
	if out := mustSandtop(t, "ls", "-o", "name", "--tag", "ux-*", "--state", "running"); out != "" {
		t.Fatalf("after kill of both:\n%s", out)
	}
	if r := sandtop(t, "lss"); r.code != exitUsage || !strings.Contains(r.stderr, "did you mean") || !strings.Contains(r.stderr, "ls") {
		t.Fatalf("lss: %d %s", r.code, r.stderr)
	}
}

func runTagged(t *testing.T, tag string, argv ...string) int {
	t.Helper()
	out := mustSandtop(t, append([]string{"run", "--tag", tag, "--"}, argv...)...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	return pgid
}

// TestVersionAndDebugLog: version names the running daemon's build, and
// SANDTOP_DEBUG logs what a command does.
func TestVersionAndDebugLog(t *testing.T) {
	r := sandtopEnv(t, append(append([]string(nil), testEnv...), "SANDTOP_DEBUG=1"), "ls")
	if r.code != 0 || !strings.Contains(r.stderr, "opening sandbox") {
		t.Fatalf("SANDTOP_DEBUG=1 ls: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	var doc versionDoc
	if err := json.Unmarshal([]byte(mustSandtop(t, "version", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Client == "" || doc.Daemon != doc.Client {
		t.Fatalf("version: %+v; the daemon this binary started should be the same build", doc)
	}
	if strings.Contains(r.stderr, "warning: the local daemon") {
		t.Fatalf("warned about a daemon of the same build:\n%s", r.stderr)
	}
}
