package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/config"
	"sandtop/testwait"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
)

// An E2B team on loopback: the fake control plane, a running sandbox whose
// envd is our daemon in stock-envd mode, and a paused one whose envd
// address is a tripwire that counts every request (a paused sandbox must
// never be dialled: traffic could wake it). The key has a shape E2B does
// not issue, as an E2B-compatible provider's would.

const compatKey = "sk_test_123"

const (
	runningID = "sbx1run"
	pausedID  = "sbx2pause"
)

type e2bTeam struct {
	fake         *e2bfake.Fake
	running      *daemontest.Env
	paused       *daemontest.Env // where the paused sandbox's envd really is, once resumed
	tripwire     atomic.Int64    // requests to the paused sandbox's envd address
	tripwireURL  string
	me           string
	dir          string
	configPath   string
	pausedDetail e2bfake.Sandbox
}

func newE2BTeam(t *testing.T) *e2bTeam {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	team := &e2bTeam{
		fake:    e2bfake.New(t, compatKey),
		running: daemontest.StartTCP(t, daemon.Config{Compat: true, Token: "envd-run"}),
		paused:  daemontest.StartTCP(t, daemon.Config{Compat: true, Token: "envd-paused"}),
		me:      me.Username,
		dir:     t.TempDir(),
	}
	trip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		team.tripwire.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(trip.Close)
	team.tripwireURL = trip.URL
	now := time.Now().UTC().Truncate(time.Second)
	var samples []e2bfake.Metric
	for i := range 40 { // a sample every 5 s, as E2B takes them
		samples = append(samples, e2bfake.Metric{At: now.Add(time.Duration(i-20) * 5 * time.Second), CPUCount: 2, CPUUsedPct: 37, MemUsed: 200 << 20, MemTotal: 512 << 20})
	}
	team.fake.Add(e2bfake.Sandbox{ID: runningID, Alias: "agent-box", TemplateID: "tpl9x", EnvdURL: team.running.Addr, Token: team.running.Token,
		Metadata: map[string]string{"team": "t1", "owner": "ann"}, Started: now.Add(-time.Hour), EndAt: now.Add(time.Hour), Metrics: samples,
		Logs: []e2bfake.LogLine{{At: now.Add(-time.Minute), Level: "info", Message: "envd started"}}})
	team.pausedDetail = e2bfake.Sandbox{ID: pausedID, Alias: "night-job", TemplateID: "tpl7y", State: "paused", EnvdURL: trip.URL, Token: team.paused.Token,
		Metadata: map[string]string{"team": "t1", "owner": "bob"}, Started: now.Add(-2 * time.Hour), EndAt: now.Add(20 * time.Hour)}
	team.fake.Add(team.pausedDetail)

	state := filepath.Join(team.dir, "state")
	cfg := fmt.Sprintf(`
[targets.team]
e2b_metadata = { team = "t1" }
user = %[1]q
runtime_root = %[2]q
agent_workspace = %[3]q

[targets.run]
e2b = %[4]q
user = %[1]q
runtime_root = %[2]q
agent_workspace = %[3]q

[targets.paused]
e2b = %[5]q
user = %[1]q
runtime_root = %[2]q
agent_workspace = %[3]q
`, team.me, state, team.dir, runningID, pausedID)
	team.configPath = filepath.Join(team.dir, "config.toml")
	if err := os.WriteFile(team.configPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return team
}

// noSideEffects fails the test if the control plane has seen a connect,
// resume or timeout call, or the paused sandbox's envd any traffic.
func (team *e2bTeam) noSideEffects(t *testing.T, when string) {
	t.Helper()
	if calls := team.fake.MutatingCalls(); len(calls) != 0 {
		t.Fatalf("%s: the control plane saw lifecycle calls: %+v", when, calls)
	}
	if n := team.tripwire.Load(); n != 0 {
		t.Fatalf("%s: the paused sandbox's envd was dialled %d times", when, n)
	}
	if sb, _ := team.fake.Sandbox(pausedID); sb.State != "paused" {
		t.Fatalf("%s: the paused sandbox is %s", when, sb.State)
	}
}

// env runs the binary against the fake, E2B_SANDBOX_URL at envdURL.
func (team *e2bTeam) env(envdURL string) []string {
	return append(append([]string{}, testEnv...), "E2B_API_KEY="+compatKey, "E2B_API_URL="+team.fake.URL,
		"E2B_SANDBOX_URL="+envdURL, "SANDTOP_CONFIG="+team.configPath)
}

// describes counts GET /sandboxes/{id} for one sandbox.
func (team *e2bTeam) count(method, route, id string) int {
	n := 0
	for _, c := range team.fake.Log() {
		if c.Method == method && c.Route == route && c.SandboxID == id {
			n++
		}
	}
	return n
}

// TestE2BWatchingChangesNothingFast: the TUI watches a running and a paused
// sandbox through many refresh cycles (shortened periods), switching
// between them; then an explicit, confirmed resume makes exactly one
// lifecycle call, after which the resumed sandbox is dialled and watched.
func TestE2BWatchingChangesNothingFast(t *testing.T) {
	team := newE2BTeam(t)
	watchTeam(t, team, 3*time.Second, 30*time.Millisecond, 30*time.Millisecond, 20)
}

// TestE2BWatchingChangesNothingFor30s is the same with E2B's own refresh
// periods, for 30 seconds of real watching.
func TestE2BWatchingChangesNothingFor30s(t *testing.T) {
	if testing.Short() {
		t.Skip("watches for 30 s")
	}
	team := newE2BTeam(t)
	watchTeam(t, team, 30*time.Second, 0, 0, 1)
}

func watchTeam(t *testing.T, team *e2bTeam, watch, planeEvery, metricsEvery time.Duration, minCycles int) {
	t.Setenv("E2B_API_KEY", compatKey)
	t.Setenv("E2B_API_URL", team.fake.URL)
	cfg, err := config.Load(team.configPath)
	if err != nil {
		t.Fatal(err)
	}
	sel, err := namedTarget(cfg, "team")
	if err != nil {
		t.Fatal(err)
	}
	sel.cfg.E2BConfig.EnvdURLFor = team.fake.EnvdURLFor // each sandbox to its own envd
	ctx, cancel := context.WithTimeout(context.Background(), watch+90*time.Second)
	defer cancel()
	o := &tuiOpener{cfg: cfg, listPeriod: planeEvery, metricsGap: metricsEvery}
	defer o.closeAll()
	contexts, _ := o.specs(ctx, []selection{sel}, 0)
	if len(contexts) != 2 || contexts[0].Name != "e2b:"+runningID || contexts[1].Name != "e2b:"+pausedID ||
		contexts[1].Provider == nil || !contexts[1].ProviderInfo.Paused() {
		t.Fatalf("contexts %+v", contexts)
	}
	team.noSideEffects(t, "listing")

	m := ui.NewModel(ui.Options{Sandboxes: contexts, Theme: themes.MustLoad("dark"), ProviderRefresh: planeEvery, MetricsRefresh: metricsEvery})
	defer m.Close()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(140, 40))
	scr := screentest.New(tm.Output(), 140, 40)
	screen := func(want string) {
		t.Helper()
		scr.Wait(t, 30*time.Second, want)
	}
	keys := func(ks ...string) {
		for _, k := range ks {
			msg := tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
			if k == "enter" {
				msg = tea.KeyPressMsg{Code: tea.KeyEnter}
			}
			tm.Send(msg)
		}
	}
	screen("connected")
	screen("cpu 37%")

	// Watch the running one, then the paused one, then the running one.
	deadline := time.Now().Add(watch)
	for i, step := range []string{"2", "1"} {
		for time.Now().Before(deadline.Add(-watch * time.Duration(1-i) / 2)) {
			team.noSideEffects(t, "watching")
			time.Sleep(50 * time.Millisecond)
		}
		keys("c", step, "enter")
		if step == "2" {
			screen("⏸ paused")
		}
	}
	// Watch for the whole period, then on until the refresh cycles the test
	// asks for have happened: on a loaded machine 30 ms ticks run late, and
	// what matters is how many cycles changed nothing, not how fast they came.
	// The state of both comes from the team's listing, swept for all;
	// a sandbox is described only to connect to it, once.
	lists := func() int { return team.fake.Calls("GET /v2/sandboxes") }
	cycled := func() bool {
		return lists() >= minCycles && team.count("GET", "/sandboxes/{id}/metrics", runningID) >= minCycles
	}
	for time.Now().Before(deadline) || (!cycled() && time.Now().Before(deadline.Add(60*time.Second))) {
		team.noSideEffects(t, "watching")
		time.Sleep(50 * time.Millisecond)
	}
	team.noSideEffects(t, "after watching")
	if n := lists(); n < minCycles {
		t.Errorf("the team was listed %d times while watched; want at least %d refreshes", n, minCycles)
	}
	if n := team.count("GET", "/sandboxes/{id}", runningID); n != 1 {
		t.Errorf("the running sandbox was described %d times; want once, to connect", n)
	}
	if n := team.count("GET", "/sandboxes/{id}", pausedID); n != 0 {
		t.Errorf("the paused sandbox was described %d times; it is never connected to", n)
	}
	if n := team.count("GET", "/sandboxes/{id}/metrics", runningID); n < minCycles {
		t.Errorf("metrics of the running sandbox read %d times; want at least %d", n, minCycles)
	}
	if n := team.count("GET", "/sandboxes/{id}/metrics", pausedID); n != 0 {
		t.Errorf("metrics of the paused sandbox read %d times; a paused sandbox has none", n)
	}

	// ls on each, through the binary, as an operator would run it.
	for _, tc := range []struct{ name, envd, want string }{{"run", team.running.Addr, "running"}, {"paused", team.tripwireURL, "paused"}} {
		r := sandtopEnv(t, team.env(tc.envd), "ls", "--target", tc.name)
		if r.code != 0 || !strings.Contains(r.stdout, tc.want) || !strings.Contains(r.stderr, "does not look like an E2B key") {
			t.Fatalf("ls --target %s: exit %d\nstdout: %s\nstderr: %s", tc.name, r.code, r.stdout, r.stderr)
		}
	}
	team.noSideEffects(t, "after ls")

	// The explicit resume: on the paused one, R, then confirm.
	team.pausedDetail.EnvdURL = team.paused.Addr // once awake, its envd answers there
	team.fake.Add(team.pausedDetail)
	keys("c", "2", "enter")
	screen("⏸ paused")
	keys("R")
	screen("resume e2b:" + pausedID + "?")
	keys("y")
	screen("is running again")
	calls := team.fake.MutatingCalls()
	if len(calls) != 1 || calls[0].Route != "/sandboxes/{id}/connect" || calls[0].SandboxID != pausedID {
		t.Fatalf("the resume made %+v; want exactly one connect of %s", calls, pausedID)
	}
	// A few more refresh cycles: still exactly one.
	more := lists() + min(3, minCycles) // with E2B's own 30 s period, one
	testwait.For(t, time.Until(deadline.Add(60*time.Second)), "refreshes after the resume", func() bool { return lists() >= more })
	if calls := team.fake.MutatingCalls(); len(calls) != 1 {
		t.Fatalf("after the resume and more watching: %+v", calls)
	}
	keys("q")
	final := tm.FinalModel(t, teatest.WithFinalTimeout(10*time.Second)).(*ui.Model)
	if v := ansi.Strip(final.View().Content); !strings.Contains(v, "night-job") || strings.Contains(v, "⏸ paused") {
		t.Fatalf("after the resume the header should show the running sandbox:\n%s", v)
	}
}

// TestE2BCLIResumeAsksAndIsRefusedReadOnly: resume and extend are refused
// read-only and without a confirmation (no terminal), make nothing happen
// then, and make exactly one call each with --yes.
func TestE2BCLIResumeAsksAndIsRefusedReadOnly(t *testing.T) {
	team := newE2BTeam(t)
	env := team.env(team.running.Addr)
	for _, args := range [][]string{
		{"e2b", "resume", pausedID, "--read-only", "--yes"},
		{"e2b", "resume", pausedID},
		{"e2b", "extend", runningID, "--timeout", "10m"},
	} {
		if r := sandtopEnv(t, env, args...); r.code == 0 {
			t.Fatalf("%v succeeded: %s", args, r.stdout)
		}
	}
	team.noSideEffects(t, "refused actions")
	out := sandtopEnv(t, env, "e2b", "ls")
	if out.code != 0 || !strings.Contains(out.stdout, "night-job (tpl7y)") || !strings.Contains(out.stdout, "owner=bob,team=t1") || !strings.Contains(out.stdout, "paused") {
		t.Fatalf("e2b ls: %+v", out)
	}
	if r := sandtopEnv(t, env, "e2b", "ls", "--e2b-metadata", "owner=ann"); r.code != 0 || strings.Contains(r.stdout, pausedID) || !strings.Contains(r.stdout, runningID) {
		t.Fatalf("e2b ls --e2b-metadata owner=ann: %+v", r)
	}
	if r := sandtopEnv(t, env, "e2b", "logs", runningID); r.code != 0 || !strings.Contains(r.stdout, "envd started") {
		t.Fatalf("e2b logs: %+v", r)
	}
	team.noSideEffects(t, "ls and logs")
	if r := sandtopEnv(t, env, "e2b", "resume", pausedID, "--yes", "--timeout", "10m"); r.code != 0 || !strings.Contains(r.stdout, "running") {
		t.Fatalf("resume --yes: %+v", r)
	}
	if r := sandtopEnv(t, env, "e2b", "extend", runningID, "--yes", "--timeout", "90s"); r.code != 0 {
		t.Fatalf("extend --yes: %+v", r)
	}
	calls := team.fake.MutatingCalls()
	if len(calls) != 2 || calls[0].Route != "/sandboxes/{id}/connect" || calls[1].Route != "/sandboxes/{id}/timeout" || calls[1].SandboxID != runningID {
		t.Fatalf("want one connect and one timeout, got %+v", calls)
	}
}

// TestE2BLsShowsCPUAndMemory: e2b ls gives each sandbox's CPU count and
// memory as E2B's listing describes them, in the table and in the JSON.
func TestE2BLsShowsCPUAndMemory(t *testing.T) {
	fake := e2bfake.New(t, compatKey)
	now := time.Now().UTC()
	fake.Add(e2bfake.Sandbox{ID: "sbxbig", TemplateID: "tplbig", Started: now, EndAt: now.Add(time.Hour), CPUCount: 8, MemoryMB: 4096})
	fake.Add(e2bfake.Sandbox{ID: "sbxodd", TemplateID: "tplodd", Started: now, EndAt: now.Add(time.Hour), CPUCount: 3, MemoryMB: 1536})
	env := append(append([]string{}, testEnv...), "E2B_API_KEY="+compatKey, "E2B_API_URL="+fake.URL)

	r := sandtopEnv(t, env, "e2b", "ls")
	if r.code != 0 {
		t.Fatalf("e2b ls: %+v", r)
	}
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	if len(lines) != 3 || !regexp.MustCompile(`^SANDBOX\s+TEMPLATE\s+STATE\s+CPU\s+RAM\s+LEFT\s+METADATA$`).MatchString(lines[0]) {
		t.Fatalf("e2b ls header:\n%s", r.stdout)
	}
	for _, want := range []string{`sbxbig\s+tplbig\s+running\s+8\s+4 GiB\s`, `sbxodd\s+tplodd\s+running\s+3\s+1536 MiB\s`} {
		if !regexp.MustCompile(want).MatchString(r.stdout) {
			t.Fatalf("e2b ls lacks %q:\n%s", want, r.stdout)
		}
	}

	r = sandtopEnv(t, env, "e2b", "ls", "-o", "json")
	var doc struct {
		Sandboxes []struct {
			ID       string `json:"id"`
			CPUCount int    `json:"cpu_count"`
			MemoryMB int    `json:"memory_mb"`
		} `json:"sandboxes"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); r.code != 0 || err != nil {
		t.Fatalf("e2b ls -o json: %v %+v", err, r)
	}
	got := map[string][2]int{}
	for _, s := range doc.Sandboxes {
		got[s.ID] = [2]int{s.CPUCount, s.MemoryMB}
	}
	if got["sbxbig"] != [2]int{8, 4096} || got["sbxodd"] != [2]int{3, 1536} || len(got) != 2 {
		t.Fatalf("e2b ls -o json sizes: %v\n%s", got, r.stdout)
	}
}
