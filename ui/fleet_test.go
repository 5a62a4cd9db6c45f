package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"

	"sandtop/sandbox"
	"sandtop/themes"
)

// newFleetModel is 12 provider sandboxes, s03 paused, none open: s05 has
// a stuck group, s07 a terminal waiting for input, the rest one running
// group each. summaries and opens count the calls per sandbox.
func newFleetModel(t *testing.T) (m *Model, summaries map[string]int, opens *int, mu *sync.Mutex) {
	t.Helper()
	summaries, opens, mu = map[string]int{}, new(int), &sync.Mutex{}
	var ctxs []SandboxSpec
	for i := range 12 {
		id := fmt.Sprintf("s%02d", i)
		info := ProviderInfo{ID: id, Template: "base", State: "running", StartedAt: testNow.Add(-time.Hour), EndAt: testNow.Add(time.Duration(10+i) * time.Minute)}
		if i == 3 {
			info.State = "paused"
		}
		snap := demoSnapshot(testNow)
		snap.Groups, snap.Terminals = snap.Groups[:1], nil
		switch i {
		case 5:
			snap.Groups[0].Stuck = "idle 12m"
		case 7:
			snap.Terminals = []sandbox.Terminal{{PID: 9, SID: 9, ForegroundPGID: 9, InputWaiting: true}}
		}
		name := "e2b:" + id
		ctxs = append(ctxs, SandboxSpec{Name: name, Kind: "e2b", Target: "e2b sandbox " + id, Provider: &fakeProvider{info: info}, ProviderInfo: info,
			Open: func(context.Context) (Source, error) {
				mu.Lock()
				defer mu.Unlock()
				*opens++
				return newFakeSource(), nil
			},
			Summary: func(context.Context) (sandbox.Snapshot, error) {
				mu.Lock()
				defer mu.Unlock()
				summaries[name]++
				return snap, nil
			}})
	}
	m = newModel(t, Options{Sandboxes: ctxs, Theme: themes.MustLoad("dark"), Now: func() time.Time { return testNow }})
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	run(t, m, m.Init())
	// The clock asks for the summaries that did not fit the first batch.
	for range 3 {
		_, cmd := m.Update(clockMsg(testNow))
		run(t, m, cmd)
	}
	return m, summaries, opens, mu
}

// TestFleetOpensOnCountsWithoutDialling: with many sandboxes the TUI opens
// on the fleet view, dials none of them, asks each running one for its
// summary once (never the paused one), and shows their counts; W puts the
// stuck one first and the waiting one next; / filters.
func TestFleetOpensOnCountsWithoutDialling(t *testing.T) {
	m, summaries, opens, mu := newFleetModel(t)
	if m.fleet == nil {
		t.Fatal("12 sandboxes: the TUI should open on the fleet view")
	}
	mu.Lock()
	if *opens != 0 {
		t.Errorf("%d sandboxes were dialled at startup; want none", *opens)
	}
	for i := range 12 {
		name := fmt.Sprintf("e2b:s%02d", i)
		want := 1
		if i == 3 {
			want = 0
		}
		if summaries[name] != want {
			t.Errorf("%s summarised %d times; want %d", name, summaries[name], want)
		}
	}
	mu.Unlock()
	v := stripStyle(viewOf(m))
	if !strings.Contains(v, "counts 11/11") {
		t.Fatalf("not every count shown:\n%s", v)
	}
	press(t, m, "W")
	rows := m.fleet.rows(m)
	if m.sandboxes[rows[0]].spec.Name != "e2b:s05" || m.sandboxes[rows[1]].spec.Name != "e2b:s07" {
		t.Fatalf("worst first: %s, %s", m.sandboxes[rows[0]].spec.Name, m.sandboxes[rows[1]].spec.Name)
	}
	if line := lineWith(stripStyle(viewOf(m)), "e2b:s05"); !strings.Contains(line, "idle 12m") {
		t.Fatalf("the stuck one's reason: %q", line)
	}
	press(t, m, "W", "/")
	typeText(t, m, "s1")
	press(t, m, "enter")
	if rows := m.fleet.rows(m); len(rows) != 2 {
		t.Fatalf("filter s1: %d rows", len(rows))
	}
	press(t, m, "enter") // show the one under the cursor: only now it is dialled
	mu.Lock()
	n := *opens
	mu.Unlock()
	if m.fleet != nil || n != 1 {
		t.Fatalf("enter: fleet %v, %d opens; want the tree and one dial", m.fleet != nil, n)
	}
}

func lineWith(screen, s string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestGoldenFleet pins the fleet view at 80x24 and 160x48, worst first.
// Rewrite with: go test ./ui -run TestGoldenFleet -update
func TestGoldenFleet(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		t.Run(fmt.Sprintf("fleet_%dx%d", size[0], size[1]), func(t *testing.T) {
			m, _, _, _ := newFleetModel(t)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			press(t, m, "W")
			golden.RequireEqual(t, []byte(viewOf(m)))
		})
	}
}

type backoffPlane struct{ *fakeProvider }

func (backoffPlane) Backoff() (time.Duration, string) { return 12 * time.Second, "429 rate limited" }

// A provider that backs off says so in the fleet view's title and in the
// header of a sandbox shown.
func TestProviderBackoffIsShown(t *testing.T) {
	m, _, _, _ := newProviderModel(t, func(o *Options) {
		o.Sandboxes[0].Provider = backoffPlane{o.Sandboxes[0].Provider.(*fakeProvider)}
	})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 40})
	if h := stripStyle(m.viewHeader()); !strings.Contains(h, "backing off (429 rate limited), 12s") {
		t.Fatalf("header: %q", h)
	}
	press(t, m, "c")
	if v := stripStyle(viewOf(m)); !strings.Contains(v, "E2B backing off (429 rate limited), 12s") {
		t.Fatalf("fleet view:\n%s", v)
	}
}
