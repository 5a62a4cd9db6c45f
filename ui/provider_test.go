package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"sandtop/themes"
)

// fakeProvider is a provider that records every call.
type fakeProvider struct {
	mu    sync.Mutex
	info  ProviderInfo
	calls []string
}

func (p *fakeProvider) record(c string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, c)
}

func (p *fakeProvider) count(prefix string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (p *fakeProvider) Describe(context.Context) (ProviderInfo, error) {
	p.record("describe")
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.info, nil
}

func (p *fakeProvider) Metrics(context.Context) (ProviderMetrics, bool, error) {
	p.record("metrics")
	return ProviderMetrics{At: testNow, CPUCount: 2, CPUPct: 12.4, MemUsed: 210 << 20, MemTotal: 512 << 20}, true, nil
}

func (p *fakeProvider) Logs(context.Context, int) ([]ProviderLogLine, error) {
	p.record("logs")
	return []ProviderLogLine{{At: testNow, Level: "info", Message: "envd started"}, {At: testNow, Level: "warn", Message: "memory at 90%"}}, nil
}

func (p *fakeProvider) Resume(_ context.Context, d time.Duration) error {
	p.record(fmt.Sprint("resume ", d))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info.State, p.info.EndAt = "running", testNow.Add(d)
	return nil
}

func (p *fakeProvider) Extend(_ context.Context, d time.Duration) error {
	p.record(fmt.Sprint("extend ", d))
	p.mu.Lock()
	defer p.mu.Unlock()
	p.info.EndAt = testNow.Add(d)
	return nil
}

// mutations counts the calls that change a sandbox.
func (p *fakeProvider) DefaultTimeout() time.Duration { return 5 * time.Minute }

func (p *fakeProvider) mutations() int { return p.count("resume") + p.count("extend") }

// newProviderModel holds a running E2B sandbox with 90 s left (on screen), a
// paused one, and a local sandbox with no provider.
func newProviderModel(t testing.TB, mod ...func(*Options)) (m *Model, running, paused *fakeProvider, opened *int) {
	t.Helper()
	running = &fakeProvider{info: ProviderInfo{ID: "i7k2", Template: "tpl9x", Alias: "agent-box", State: "running",
		StartedAt: testNow.Add(-time.Hour), EndAt: testNow.Add(90 * time.Second), Metadata: map[string]string{"team": "t1", "owner": "ann"}}}
	paused = &fakeProvider{info: ProviderInfo{ID: "p3q9", Template: "tpl7y", State: "paused",
		StartedAt: testNow.Add(-2 * time.Hour), EndAt: testNow.Add(20 * time.Hour), Metadata: map[string]string{"job": "nightly"}}}
	opened = new(int)
	src := newFakeSource()
	src.info.Name = "e2b:i7k2"
	opts := Options{
		Sandboxes: []SandboxSpec{
			{Name: "e2b:i7k2", Kind: "e2b", Target: "https://49983-i7k2.e2b.app", Source: src, Provider: running, ProviderInfo: running.info},
			{Name: "e2b:p3q9", Kind: "e2b", Target: "e2b sandbox p3q9", Provider: paused, ProviderInfo: paused.info,
				Err: errors.New("e2b: sandbox p3q9 is paused"),
				Open: func(context.Context) (Source, error) {
					*opened++
					if paused.count("resume") == 0 {
						return nil, errors.New("e2b: sandbox p3q9 is paused")
					}
					s := newFakeSource()
					s.info.Name = "e2b:p3q9"
					return s, nil
				}},
			{Name: "local", Kind: "local", Target: "unix:/run/sandtop.sock", Source: newFakeSource()},
		},
		Theme: themes.MustLoad("dark"),
		Now:   func() time.Time { return testNow },
	}
	for _, f := range mod {
		f(&opts)
	}
	m = newModel(t, opts)
	run(t, m, m.Init())
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	feed(m, m.sandboxes[0], src)
	return m, running, paused, opened
}

// TestGoldenProviderPicker pins the picker with E2B sandboxes: template
// alias, state, time left (a warning under two minutes), metrics and
// metadata on each one's second line, and a paused one shown as paused.
// Rewrite with: go test ./ui -run TestGolden -update
func TestGoldenProviderPicker(t *testing.T) {
	for _, size := range [][2]int{{100, 34}, {160, 50}} {
		t.Run(fmt.Sprintf("picker_e2b_%d", size[0]), func(t *testing.T) {
			m, _, _, _ := newProviderModel(t)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			press(t, m, "c")
			golden.RequireEqual(t, []byte(viewOf(m)))
		})
	}
}

// TestGoldenProviderHeader pins the header of a running E2B sandbox near its
// end, and of a paused one.
func TestGoldenProviderHeader(t *testing.T) {
	m, _, _, _ := newProviderModel(t)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	running := plain(m.viewHeader())
	press(t, m, "c", "2", "enter")
	golden.RequireEqual(t, []byte(running+"\n"+plain(m.viewHeader())+"\n"))
	if !strings.Contains(running, "1m30s left") || !strings.Contains(running, "agent-box") || !strings.Contains(running, "cpu 12%") {
		t.Fatalf("running header: %q", running)
	}
}

func TestProviderCountdownTicksAndWarns(t *testing.T) {
	now := testNow
	m, _, _, _ := newProviderModel(t, func(o *Options) { o.Now = func() time.Time { return now } })
	if h := plain(m.viewHeader()); !strings.Contains(h, "⚠ 1m30s left") {
		t.Fatalf("under two minutes the countdown warns: %q", h)
	}
	now = now.Add(31 * time.Second)
	if h := plain(m.viewHeader()); !strings.Contains(h, "⚠ 59s left") {
		t.Fatalf("the countdown follows the clock: %q", h)
	}
	m.cur.prov.info.EndAt = now.Add(10 * time.Minute)
	if h := plain(m.viewHeader()); strings.Contains(h, "⚠") || !strings.Contains(h, "10m00s left") {
		t.Fatalf("no warning with ten minutes left: %q", h)
	}
}

// TestProviderRefreshNoMoreOftenThanAsked: ticks faster than the periods ask
// nothing new until a period has passed, and only the sandbox on screen
// has its metrics read (all of them while the picker is open).
func TestProviderRefreshNoMoreOftenThanAsked(t *testing.T) {
	now := testNow
	m, running, paused, _ := newProviderModel(t, func(o *Options) {
		o.Now = func() time.Time { return now }
		o.ProviderRefresh, o.MetricsRefresh = 15*time.Second, 5*time.Second
	})
	tick := func() { run(t, m, m.onProviderTick()) }
	d0, m0 := running.count("describe"), running.count("metrics")
	for range 10 {
		tick()
	}
	if running.count("describe") != d0 || running.count("metrics") != m0 {
		t.Fatalf("asked again within a period: %v", running.calls)
	}
	now = now.Add(5 * time.Second)
	tick()
	tick()
	if running.count("metrics") != m0+1 || running.count("describe") != d0 {
		t.Fatalf("after 5 s: one more metrics read only: %v", running.calls)
	}
	now = now.Add(10 * time.Second)
	tick()
	if running.count("describe") != d0+1 || paused.count("describe") != 1 {
		t.Fatalf("after 15 s both are described: %v / %v", running.calls, paused.calls)
	}
	if paused.count("metrics") != 0 {
		t.Fatal("a paused sandbox has no metrics to read")
	}
	if running.mutations()+paused.mutations() != 0 {
		t.Fatal("refreshing changed a sandbox")
	}
}

func TestProviderResumeAsksOnceAndReadOnlyRefuses(t *testing.T) {
	m, running, paused, opened := newProviderModel(t, func(o *Options) { o.Sandboxes[1].ReadOnly = true })
	press(t, m, "R")
	if !strings.Contains(m.status, "running") || m.dialog != nil {
		t.Fatalf("R on a running sandbox: %q", m.status)
	}
	press(t, m, "c", "2", "enter", "R")
	if m.dialog != nil || !strings.Contains(m.status, "read-only") {
		t.Fatalf("R in a read-only context: %q", m.status)
	}
	if paused.mutations() != 0 || *opened != 0 {
		t.Fatalf("refused, yet %v, opened %d", paused.calls, *opened)
	}

	m, running, paused, opened = newProviderModel(t)
	press(t, m, "c", "2", "enter")
	if *opened != 0 || !strings.Contains(plain(m.viewHeader()), "paused") {
		t.Fatalf("switching to a paused sandbox dialled it (%d) or hid its state", *opened)
	}
	press(t, m, "R")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("R must ask first; dialog %T", m.dialog)
	}
	press(t, m, "n")
	if paused.mutations() != 0 {
		t.Fatal("a declined resume resumed")
	}
	press(t, m, "R", "y")
	if paused.count("resume 5m0s") != 1 || paused.mutations() != 1 || running.mutations() != 0 {
		t.Fatalf("one resume of the paused sandbox only: %v / %v", paused.calls, running.calls)
	}
	if *opened != 1 || m.cur.state != openReady || m.cur.prov.info.Paused() {
		t.Fatalf("after the resume it is described and dialled once: opened %d, state %v, info %+v", *opened, m.cur.state, m.cur.prov.info)
	}
	press(t, m, ":")
	typeText(t, m, "e2b-extend 10m")
	press(t, m, "enter", "y")
	if paused.count("extend 10m0s") != 1 || paused.mutations() != 2 {
		t.Fatalf(":e2b-extend 10m: %v", paused.calls)
	}
	if !strings.HasPrefix(m.status, "extended ") {
		t.Fatalf("status after an extend: %q", m.status)
	}
	press(t, m, "c", "3", "enter", "E")
	if !strings.Contains(m.status, "only E2B") {
		t.Fatalf("E on a sandbox with no provider: %q", m.status)
	}
}

func TestProviderLogsView(t *testing.T) {
	m, running, _, _ := newProviderModel(t)
	press(t, m, "L")
	v := viewOf(m)
	if !strings.Contains(v, "Sandbox log: e2b:i7k2") || !strings.Contains(v, "memory at 90%") || running.count("logs") != 1 {
		t.Fatalf("logs view:\n%s", v)
	}
	press(t, m, "esc")
	if m.dialog != nil || running.mutations() != 0 {
		t.Fatal("esc closes the log; reading it changes nothing")
	}
}

func TestWarningsAreLogged(t *testing.T) {
	m, _, _, _ := newProviderModel(t, func(o *Options) { o.Warnings = []string{"E2B_API_KEY does not look like an E2B key"} })
	if v := viewOf(m); !strings.Contains(v, "does not look like an E2B key") {
		t.Fatalf("the warning is not in the event log:\n%s", v)
	}
}

// A paused sandbox is listed as paused, even when a dial from before the
// pause failed: it is not unreachable.
func TestPausedSandboxIsNotListedUnreachable(t *testing.T) {
	m, _, _, _ := newProviderModel(t)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m.sandboxes[1].sum.err = errors.New("dial tcp: connection refused")
	m.sandboxes[1].state = openFailed
	press(t, m, "c")
	for _, line := range strings.Split(viewOf(m), "\n") {
		if strings.Contains(line, "p3q9") && strings.Contains(line, "unreachable") {
			t.Fatalf("paused sandbox listed unreachable: %q", line)
		}
	}
}
