package ui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/themes"
)

// newContextsModel builds a model over two fake sandboxes, alpha (shown)
// and beta, plus gamma, which cannot be reached. Both fakes serve the
// demo snapshot, so the same pgids exist in both: an action that crossed
// sandboxes would land on a real group.
func newContextsModel(t testing.TB, mod ...func(*Options)) (*Model, *fakeSource, *fakeSource) {
	t.Helper()
	a, b := newFakeSource(), newFakeSource()
	a.info.Name, b.info.Name = "alpha", "beta"
	opts := Options{
		Sandboxes: []SandboxSpec{
			{Name: "alpha", Kind: "local", Target: "unix:/a.sock", Source: a},
			{Name: "beta", Kind: "envd", Target: "unix:/b.sock", Source: b},
			{Name: "gamma", Kind: "envd", Target: "http://gamma:49983", Open: func(context.Context) (Source, error) {
				return nil, errors.New("connection refused")
			}},
		},
		Theme: themes.MustLoad("dark"),
		Now:   func() time.Time { return testNow },
	}
	for _, f := range mod {
		f(&opts)
	}
	m := newModel(t, opts)
	run(t, m, m.Init())
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	feed(m, m.sandboxes[0], a)
	return m, a, b
}

// feed delivers a sandbox's first snapshot, as its watch would.
func feed(m *Model, sb *sandboxState, src *fakeSource) {
	m.Update(scopedMsg{sb, watchStartedMsg{gen: sb.watchGen, ch: src.snaps}})
	m.Update(scopedMsg{sb, snapshotMsg{gen: sb.watchGen, snap: demoSnapshot(testNow), ch: src.snaps}})
}

// switchCtx types ":ctx NAME" and feeds the new sandbox its snapshot.
func switchCtx(t *testing.T, m *Model, name string, src *fakeSource) {
	t.Helper()
	press(t, m, ":")
	typeText(t, m, "ctx "+name)
	press(t, m, "enter")
	if m.cur.spec.Name != name {
		t.Fatalf("on %q after :ctx %s", m.cur.spec.Name, name)
	}
	if src != nil && len(m.cur.tree.groups) == 0 {
		feed(m, m.cur, src)
	}
}

func TestContextSwitchKeepsMarksApart(t *testing.T) {
	m, a, b := newContextsModel(t)
	press(t, m, "j", "space", "space") // alpha: 4100 and 4123 marked
	if len(m.cur.marks) != 2 {
		t.Fatalf("alpha marks = %v", m.cur.marks)
	}
	switchCtx(t, m, "beta", b)
	if len(m.cur.marks) != 0 {
		t.Fatalf("alpha's marks leaked into beta: %v", m.cur.marks)
	}
	press(t, m, "X")
	if m.dialog != nil {
		t.Fatalf("bulk teardown in beta opened with no marks of its own")
	}
	press(t, m, "j", "j", "space") // beta: 4123 only
	switchCtx(t, m, "alpha", nil)
	if len(m.cur.marks) != 2 || !m.cur.marks[4100] || !m.cur.marks[4123] {
		t.Fatalf("alpha's marks were not kept: %v", m.cur.marks)
	}
	press(t, m, "X")
	typeText(t, m, "2")
	press(t, m, "enter")
	if _, _, tds := a.calls(); len(tds) != 2 {
		t.Fatalf("alpha teardowns = %v, want 2", tds)
	}
	if _, _, tds := b.calls(); len(tds) != 0 {
		t.Fatalf("a bulk teardown in alpha reached beta: %v", tds)
	}
	if sb := m.sandboxes[1]; len(sb.marks) != 1 || !sb.marks[4123] {
		t.Fatalf("beta's marks changed from alpha: %v", sb.marks)
	}
}

func TestActionsGoToTheShownSandbox(t *testing.T) {
	m, a, b := newContextsModel(t)
	switchCtx(t, m, "beta", b)
	press(t, m, ":")
	typeText(t, m, "run sleep 5")
	press(t, m, "enter")
	press(t, m, "j", "s", "enter", "y") // SIGTERM to beta's 4100
	as, asig, _ := a.calls()
	bs, bsig, _ := b.calls()
	if len(as) != 0 || len(asig) != 0 {
		t.Fatalf("alpha got beta's actions: spawns %v signals %v", as, asig)
	}
	if len(bs) != 1 || len(bsig) != 1 || bsig[0] != "4100:SIGTERM" {
		t.Fatalf("beta: spawns %v signals %v", bs, bsig)
	}
	if !strings.Contains(viewOf(m), "beta (2/3") {
		t.Fatalf("header does not name beta:\n%s", plain(m.viewHeader()))
	}
}

func TestDialogStaysBoundToItsSandbox(t *testing.T) {
	m, a, b := newContextsModel(t)
	press(t, m, "j", "j", "x") // confirm teardown of alpha's 4123
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("x did not ask first")
	}
	if !strings.Contains(viewOf(m), "in sandbox alpha") {
		t.Fatalf("the confirmation does not say which sandbox")
	}
	run(t, m, m.switchTo(1)) // the screen moves to beta under the open dialog
	feed(m, m.cur, b)
	if m.cur.spec.Name != "beta" || m.dialog == nil {
		t.Fatalf("expected beta on screen with alpha's dialog open")
	}
	press(t, m, "y")
	if _, _, tds := a.calls(); len(tds) != 1 || tds[0] != 4123 {
		t.Fatalf("alpha teardowns = %v, want [4123]", tds)
	}
	if _, _, tds := b.calls(); len(tds) != 0 {
		t.Fatalf("a dialog bound to alpha tore down in beta: %v", tds)
	}
}

func TestTeardownKeepsRunningAfterASwitchAndIsLoggedUnderItsSandbox(t *testing.T) {
	m, a, b := newContextsModel(t)
	release := make(chan struct{})
	a.teardown = func(ctx context.Context, pgid int, progress func(TeardownEvent)) error {
		progress(TeardownEvent{PGID: pgid, Phase: TeardownTerm, Members: 1})
		<-release
		progress(TeardownEvent{PGID: pgid, Phase: TeardownKill, Members: 1})
		progress(TeardownEvent{PGID: pgid, Phase: TeardownEmpty})
		return nil
	}
	press(t, m, "j", "j", "x")
	cmd := m.dialogKey(keyMsg("y")) // starts the teardown; its progress waits on release
	switchCtx(t, m, "beta", b)
	if n := m.allActiveTeardowns(); n != 1 {
		t.Fatalf("active teardowns = %d, want alpha's one", n)
	}
	close(release)
	run(t, m, cmd)
	alpha := m.sandboxes[0]
	if td := alpha.teardowns[4123]; td == nil || td.phase != TeardownEmpty {
		t.Fatalf("alpha's teardown = %+v", td)
	}
	if len(m.cur.teardowns) != 0 {
		t.Fatalf("beta shows a teardown it never started: %v", m.cur.teardowns)
	}
	if _, _, tds := b.calls(); len(tds) != 0 {
		t.Fatalf("beta was torn down: %v", tds)
	}
	var tagged bool
	for _, e := range m.log.items {
		if strings.Contains(e.text, "SIGKILL to pgid 4123") {
			tagged = e.tag == "alpha"
		}
	}
	if !tagged {
		t.Fatalf("the SIGKILL was not logged under alpha: %+v", m.log.items)
	}
	if v := plain(m.viewEvents()); !strings.Contains(v, "alpha") {
		t.Fatalf("the event log does not show the tag:\n%s", v)
	}
}

func TestReadOnlyGatesEachSandbox(t *testing.T) {
	m, a, b := newContextsModel(t, func(o *Options) { o.Sandboxes[1].ReadOnly = true })
	switchCtx(t, m, "beta", b)
	press(t, m, "j", "x")
	if m.dialog != nil {
		t.Fatalf("teardown offered in read-only beta")
	}
	press(t, m, "r")
	typeText(t, m, "sleep 1")
	press(t, m, "enter")
	if bs, _, tds := b.calls(); len(bs)+len(tds) != 0 {
		t.Fatalf("read-only beta was changed: %v %v", bs, tds)
	}
	switchCtx(t, m, "alpha", nil)
	press(t, m, "j", "j", "x", "y")
	if _, _, tds := a.calls(); len(tds) != 1 {
		t.Fatalf("alpha (writable) teardowns = %v", tds)
	}
}

func TestUnreachableSandboxShowsInThePicker(t *testing.T) {
	m, _, _ := newContextsModel(t)
	gamma := m.sandboxes[2]
	if gamma.state != openFailed || !strings.Contains(gamma.stateText(), "connection refused") {
		t.Fatalf("gamma state %v %q", gamma.state, gamma.stateText())
	}
	press(t, m, "c")
	v := viewOf(m)
	if !strings.Contains(v, "Sandboxes") || !strings.Contains(v, "unreachable: connection refused") {
		t.Fatalf("picker lacks gamma's error:\n%s", v)
	}
	press(t, m, "3", "enter")
	if m.cur != gamma || !strings.Contains(plain(m.viewHeader()), "unreachable") {
		t.Fatalf("switch to gamma: cur %q header %q", m.cur.spec.Name, plain(m.viewHeader()))
	}
	press(t, m, "r")
	typeText(t, m, "true")
	press(t, m, "enter")
	if !strings.Contains(m.status, "unreachable") {
		t.Fatalf("run in an unreachable sandbox: status %q", m.status)
	}
}

func TestCtxCommandMatchesNamesAndNumbers(t *testing.T) {
	m, _, _ := newContextsModel(t)
	for arg, want := range map[string]int{"beta": 1, "2": 1, "gam": 2, "alpha": 0, "3": 2} {
		if i, err := m.findContext(arg); err != nil || i != want {
			t.Errorf("findContext(%q) = %d, %v; want %d", arg, i, err, want)
		}
	}
	for _, arg := range []string{"0", "delta", "9"} {
		if _, err := m.findContext(arg); err == nil {
			t.Errorf("findContext(%q) should fail", arg)
		}
	}
}

func TestQuitAsksWhileAnySandboxTearsDown(t *testing.T) {
	m, _, b := newContextsModel(t)
	m.sandboxes[0].teardowns[4123] = &teardown{phase: TeardownWaiting, started: testNow}
	switchCtx(t, m, "beta", b)
	press(t, m, "q")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("quit with alpha's teardown running did not ask")
	}
}

// A snapshot for a sandbox in the background changes that sandbox only:
// not the one on screen, and not the one whose dialog is open, whose
// confirmation still goes to it alone.
func TestBackgroundSnapshotUnderAThirdSandboxsDialog(t *testing.T) {
	c := newFakeSource()
	c.info.Name = "gamma"
	m, a, b := newContextsModel(t, func(o *Options) { o.Sandboxes[2].Source, o.Sandboxes[2].Open = c, nil })
	alpha, beta, gamma := m.sandboxes[0], m.sandboxes[1], m.sandboxes[2]
	feed(m, beta, b)
	press(t, m, "j", "j", "x") // alpha's confirmation: tear down 4123
	run(t, m, m.switchTo(2))   // gamma goes on screen under it
	feed(m, gamma, c)
	if m.cur != gamma || m.dialogSB != alpha {
		t.Fatalf("expected gamma on screen with alpha's dialog: cur %q, dialog of %v", m.cur.spec.Name, m.dialogSB)
	}
	cursor, detailGen, detailPID, focus := gamma.tree.cursor, m.detailGen, m.detail.pid, m.focus

	snap := sandbox.Snapshot{Taken: testNow, Groups: []sandbox.Group{{PGID: 7000, SID: 7000, LeaderPID: 7000, State: groupstate.Running, Origin: sandbox.OriginSandtop, Started: testNow,
		Members: []sandbox.Process{{PID: 7000, PPID: 1, PGID: 7000, SID: 7000, State: "S", Argv: []string{"sleep", "9"}, Comm: "sleep", Started: testNow}}}}}
	for pid := 7100; pid < 7106; pid++ {
		snap.Terminals = append(snap.Terminals, sandbox.Terminal{PID: pid, SID: pid, ForegroundPGID: pid, Rows: 24, Cols: 80, Argv: []string{"bash"}, Started: testNow})
	}
	m.Update(scopedMsg{beta, snapshotMsg{gen: beta.watchGen, snap: snap, ch: b.snaps}})

	if len(beta.tree.groups) != 1 || beta.tree.groups[0].PGID != 7000 || len(beta.terms) != 6 {
		t.Fatalf("beta did not take its snapshot: %d groups, %d terminals", len(beta.tree.groups), len(beta.terms))
	}
	for _, sb := range []*sandboxState{alpha, gamma} {
		if len(sb.tree.groups) != 7 || len(sb.terms) != 2 || sb.liveGroup(7000) != nil {
			t.Fatalf("%s changed with beta's snapshot: %d groups, %d terminals", sb.spec.Name, len(sb.tree.groups), len(sb.terms))
		}
	}
	if want := computeLayout(m.width, m.height, len(gamma.terms), m.zoomed); m.lay != want {
		t.Fatalf("the layout follows beta's terminals: %+v, want gamma's %+v", m.lay, want)
	}
	if gamma.tree.cursor != cursor || m.detailGen != detailGen || m.detail.pid != detailPID || m.focus != focus {
		t.Fatalf("beta's snapshot moved the screen: cursor %d→%d, detail gen %d→%d pid %d→%d, focus %v→%v",
			cursor, gamma.tree.cursor, detailGen, m.detailGen, detailPID, m.detail.pid, focus, m.focus)
	}

	press(t, m, "y")
	if _, _, tds := a.calls(); len(tds) != 1 || tds[0] != 4123 {
		t.Fatalf("alpha teardowns = %v, want [4123]", tds)
	}
	for _, src := range []*fakeSource{b, c} {
		if _, _, tds := src.calls(); len(tds) != 0 {
			t.Fatalf("alpha's confirmation tore down elsewhere: %v", tds)
		}
	}
}
