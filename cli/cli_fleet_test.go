package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b"
	"sandtop/backend/e2b/e2bfake"
	"sandtop/backend/seam"
	"sandtop/config"
	"sandtop/stuck"
	"sandtop/testwait"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
)

// A fleet on loopback: N sandboxes on the fake control plane, the running
// ones backed by a few real daemons (several sandboxes to one daemon),
// the paused ones at a tripwire that counts every request.

type fleetTeam struct {
	fake     *e2bfake.Fake
	daemons  []*daemontest.Env
	tripwire atomic.Int64
	sel      selection
	cfg      config.Config
	running  int
}

func newFleetTeam(t *testing.T, n, paused, daemons int) *fleetTeam {
	t.Helper()
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	ft := &fleetTeam{fake: e2bfake.New(t, compatKey)}
	for i := range daemons {
		ft.daemons = append(ft.daemons, daemontest.StartTCP(t, daemon.Config{Token: fmt.Sprintf("envd-%d", i)}))
	}
	trip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ft.tripwire.Add(1)
		w.WriteHeader(http.StatusBadGateway)
	}))
	t.Cleanup(trip.Close)
	now := time.Now().UTC().Truncate(time.Second)
	for i := range n {
		sb := e2bfake.Sandbox{ID: fmt.Sprintf("sbx%04d", i), Metadata: map[string]string{"fleet": "f1"}, Started: now.Add(-time.Hour), EndAt: now.Add(time.Hour),
			Metrics: []e2bfake.Metric{{At: now, CPUCount: 2, CPUUsedPct: 5, MemUsed: 100 << 20, MemTotal: 512 << 20}}}
		if i < paused {
			sb.State, sb.EnvdURL, sb.Token = "paused", trip.URL, "never"
		} else {
			d := ft.daemons[i%daemons]
			sb.EnvdURL, sb.Token = d.Addr, d.Token
			ft.running++
		}
		ft.fake.Add(sb)
	}
	dir := t.TempDir()
	conf := fmt.Sprintf("[targets.fleet]\ne2b_metadata = { fleet = \"f1\" }\nuser = %q\nruntime_root = %q\nagent_workspace = %q\n",
		me.Username, filepath.Join(dir, "state"), dir)
	path := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("E2B_API_KEY", compatKey)
	t.Setenv("E2B_API_URL", ft.fake.URL)
	if ft.cfg, err = config.Load(path); err != nil {
		t.Fatal(err)
	}
	if ft.sel, err = namedTarget(ft.cfg, "fleet"); err != nil {
		t.Fatal(err)
	}
	ft.sel.cfg.E2BConfig.EnvdURLFor = ft.fake.EnvdURLFor
	return ft
}

// syncBuffer is a log sink the test reads while the TUI writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestFleetIdleIsEconomical opens the TUI on 300 sandboxes (30 paused,
// 270 running on 3 real daemons), waits until every running sandbox's
// counts are shown without visiting any, then leaves it idle for 60 s
// and counts the control plane's requests: at most 60. No paused sandbox
// is ever dialled, no lifecycle call is made, and the pool never holds
// more than 64 envd sessions.
func TestFleetIdleIsEconomical(t *testing.T) {
	if testing.Short() {
		t.Skip("idles for 60 s")
	}
	ft := newFleetTeam(t, 300, 30, 3)
	// A group in the first daemon, which its sandboxes' rows must count.
	rt, err := seam.NewRuntime(context.Background(), ft.daemons[0].Dial(), seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := rt.Spawn(context.Background(), seam.SpawnSpec{Argv: []string{"sleep", "600"}, Cwd: "/", Grace: 100 * time.Millisecond,
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.KeptOutput(), Stderr: seam.KeptOutput()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.TeardownGroup(ctx, h.Pgid(), 100*time.Millisecond, func(seam.TeardownEvent) {})
	})
	h.Detach()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	o := &tuiOpener{cfg: ft.cfg}
	defer o.closeAll()
	start := len(ft.fake.Log())
	contexts, _ := o.specs(ctx, []selection{ft.sel}, 0)
	if len(contexts) != 300 {
		t.Fatalf("%d contexts; want 300", len(contexts))
	}
	if n := ft.fake.Calls("GET /sandboxes/{id}"); n != 0 {
		t.Fatalf("listing the fleet described %d sandboxes; the listing says all it needs", n)
	}
	var logs syncBuffer
	m := ui.NewModel(ui.Options{Sandboxes: contexts, Theme: themes.MustLoad("dark"), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	defer m.Close()
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 48))
	want := fmt.Sprintf("counts shown for %d of %d sandboxes", ft.running, ft.running)
	began := time.Now()
	maxOpen := 0
	for !strings.Contains(logs.String(), want) {
		maxOpen = max(maxOpen, o.openConnections())
		if time.Since(began) > 90*time.Second {
			t.Fatalf("not every count shown after 90 s; log:\n%s", logs.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("every count shown after %v; startup made %d control-plane requests (%d describes)",
		time.Since(began).Round(time.Millisecond), len(ft.fake.Log())-start, ft.fake.Calls("GET /sandboxes/{id}"))
	// A never-visited sandbox of the first daemon shows its group.
	row := regexp.MustCompile(`sbx0030 +running +\S+ +\S+ +\S+ +[1-9]`)
	screentest.New(tm.Output(), 160, 48).WaitFunc(t, "sbx0030's group", 30*time.Second, row.MatchString)

	idleFrom := len(ft.fake.Log())
	idleEnd := time.Now().Add(60 * time.Second)
	for time.Now().Before(idleEnd) {
		maxOpen = max(maxOpen, o.openConnections())
		time.Sleep(100 * time.Millisecond)
	}
	idle := ft.fake.Log()[idleFrom:]
	routes := map[string]int{}
	for _, c := range idle {
		routes[c.Method+" "+c.Route]++
	}
	t.Logf("60 s idle: %d control-plane requests %v; at most %d envd sessions open", len(idle), routes, maxOpen)
	if len(idle) > 60 {
		t.Errorf("a 60 s idle TUI made %d control-plane requests; want at most 60: %v", len(idle), routes)
	}
	if maxOpen > poolMax {
		t.Errorf("%d envd sessions open at once; the pool holds %d", maxOpen, poolMax)
	}
	if n := ft.tripwire.Load(); n != 0 {
		t.Errorf("paused sandboxes were dialled %d times", n)
	}
	if calls := ft.fake.MutatingCalls(); len(calls) != 0 {
		t.Errorf("lifecycle calls: %+v", calls)
	}
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}

// TestFleetBacksOffOn429: while the control plane answers 429 (with
// Retry-After), the fleet stops asking until the backoff ends, says why,
// and reads the listing again afterwards.
func TestFleetBacksOffOn429(t *testing.T) {
	fake := e2bfake.New(t, compatKey)
	fake.Add(e2bfake.Sandbox{ID: "sbxa"})
	upstream, _ := url.Parse(fake.URL)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	var refuse atomic.Int64 // requests left to refuse
	var seen atomic.Int64
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.Add(1)
		if refuse.Add(-1) >= 0 {
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, err := e2b.NewClient(e2b.Config{APIKey: compatKey, APIURL: front.URL})
	if err != nil {
		t.Fatal(err)
	}
	f := newE2BFleet(c, e2b.ListOptions{})
	f.period = 0 // every describe wants a fresh listing
	f.backoff.Base, f.backoff.Max = 200*time.Millisecond, 400*time.Millisecond
	ctx := context.Background()
	if _, err := f.list(ctx); err != nil {
		t.Fatal(err)
	}
	refuse.Store(2)
	before := seen.Load()
	_, _ = f.describe(ctx, "sbxa") // refused: the backoff starts
	wait, why := f.Backoff()
	if wait < 900*time.Millisecond || why != "429 rate limited" {
		t.Fatalf("after a 429 with Retry-After: 1 the fleet waits %v (%q); want about 1 s", wait, why)
	}
	// Hammer it while it backs off: nothing reaches the control plane,
	// and the last known state is still given.
	calls := 0
	for end := time.Now().Add(800 * time.Millisecond); time.Now().Before(end); calls++ {
		sb, err := f.describe(ctx, "sbxa")
		if err != nil || sb.ID != "sbxa" {
			t.Fatalf("during the backoff: %+v, %v; want the last listing", sb, err)
		}
		if w, _ := f.Backoff(); w <= 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if n := seen.Load() - before; n != 1 || calls < 10 {
		t.Fatalf("%d requests for %d describes during the backoff; want only the refused one", n, calls)
	}
	testwait.NoError(t, 10*time.Second, func() error {
		if f.backoff.Failures() >= 2 && seen.Load()-before >= 3 {
			return nil
		}
		_, _ = f.describe(ctx, "sbxa")
		return fmt.Errorf("the listing was not tried again: %d requests, %d failures", seen.Load()-before, f.backoff.Failures())
	})
	if w, _ := f.Backoff(); w > 0 {
		t.Fatalf("still backing off after a success: %v", w)
	}
}

// TestStuckEndToEnd: on the real daemon, a quiet sleep is judged idle once
// the (shortened) time has passed, a group whose leader exited while a
// member runs is judged "leader gone" at once, and `ls -o json` (the
// binary, default rules) carries the latter's reason and not the former's.
func TestStuckEndToEnd(t *testing.T) {
	d := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rt, err := seam.NewRuntime(ctx, d.Dial(), seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	spawn := func(argv ...string) int {
		h, err := rt.Spawn(ctx, seam.SpawnSpec{Argv: argv, Cwd: "/", Grace: 100 * time.Millisecond,
			Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.KeptOutput(), Stderr: seam.KeptOutput()}})
		if err != nil {
			t.Fatal(err)
		}
		h.Detach()
		t.Cleanup(func() {
			c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = rt.TeardownGroup(c, h.Pgid(), 100*time.Millisecond, func(seam.TeardownEvent) {})
		})
		return h.Pgid()
	}
	quiet := spawn("sleep", "600")
	orphaned := spawn("sh", "-c", "sleep 601 & exit 0")
	rules := stuck.Rules{After: time.Second, IdleCPU: 1, SpinCPU: 95}
	testwait.NoError(t, 30*time.Second, func() error {
		snap, err := rt.Snapshot(ctx, seam.WatchOptions{Workspaces: []string{"/"}, Stuck: &rules})
		if err != nil {
			t.Fatal(err)
		}
		got := map[int]string{}
		for _, g := range snap.Groups {
			got[g.PGID] = g.Stuck
		}
		if !strings.HasPrefix(got[quiet], "idle ") || got[orphaned] != stuck.LeaderGone {
			return fmt.Errorf("quiet %q, orphaned %q; want idle and leader gone", got[quiet], got[orphaned])
		}
		return nil
	})
	r := sandtopEnv(t, testEnv, "--socket", d.Socket, "ls", "-o", "json")
	if r.code != 0 {
		t.Fatalf("ls: exit %d: %s", r.code, r.stderr)
	}
	var doc struct {
		Groups []struct {
			PGID  int    `json:"pgid"`
			Stuck string `json:"stuck"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("ls -o json: %v\n%s", err, r.stdout)
	}
	seen := map[int]string{}
	for _, g := range doc.Groups {
		seen[g.PGID] = g.Stuck
	}
	if s, ok := seen[orphaned]; !ok || s != stuck.LeaderGone {
		t.Errorf("ls -o json: the orphaned group's stuck is %q (listed %v); want %q\n%s", s, ok, stuck.LeaderGone, r.stdout)
	}
	if s, ok := seen[quiet]; !ok || s != "" {
		t.Errorf("ls -o json: the quiet group's stuck is %q (listed %v); the default rules wait 10 min", s, ok)
	}
}
