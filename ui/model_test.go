package ui

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
)

func TestCursorMovesAndTreeFolds(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	if r, _ := m.cur.tree.selected(); r.kind != rowSession || r.sid != 4100 {
		t.Fatalf("cursor starts on %+v, want session 4100", r)
	}
	press(t, m, "j")
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4100 {
		t.Fatalf("after j the cursor is not on pgid 4100")
	}
	press(t, m, "l") // expand the group into its processes
	// 7 groups, 2 session rows (sessions with one group have none), and
	// now 3 processes.
	if got := len(m.cur.tree.rows); got != 9+3 {
		t.Fatalf("rows after expand = %d, want 12", got)
	}
	press(t, m, "h", "h") // collapse the group, then fold its session
	if !m.cur.tree.folded[4100] {
		t.Fatalf("session 4100 not folded")
	}
	if r, _ := m.cur.tree.selected(); r.kind != rowSession || r.sid != 4100 {
		t.Fatalf("cursor should sit on the folded session, is on %+v", r)
	}
}

func TestCursorStaysOnItsGroupAcrossSnapshots(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "j", "j") // pgid 4123
	snap := demoSnapshot(testNow)
	snap.Groups = snap.Groups[1:] // 4100 leaves: rows shift up
	m.Update(snapshotMsg{snap: snap, ch: src.snaps})
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4123 {
		t.Fatalf("cursor moved off pgid 4123")
	}
}

func TestFilterNarrowsTheTreeAndEscClears(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	press(t, m, "/")
	if m.focus != focusDialog {
		t.Fatalf("focus = %v, want dialog", m.focus)
	}
	typeText(t, m, "python")
	// Only 4200 of its session matches, so it stands alone, without a
	// session row.
	if len(m.cur.tree.rows) != 1 || m.cur.tree.rows[0].group.PGID != 4200 || !m.cur.tree.rows[0].solo {
		t.Fatalf("filter rows = %d", len(m.cur.tree.rows))
	}
	press(t, m, "enter")
	if m.focus != focusList || m.cur.tree.filter != "python" {
		t.Fatalf("enter should keep the filter and return to the list")
	}
	press(t, m, "esc")
	if m.cur.tree.filter != "" || len(m.cur.tree.rows) != 9 {
		t.Fatalf("esc in the list should clear the filter, rows = %d", len(m.cur.tree.rows))
	}
	press(t, m, "/")
	typeText(t, m, "!make")
	for _, r := range m.cur.tree.rows {
		if r.kind == rowGroup && r.group.PGID == 4100 {
			t.Fatalf("inverse filter kept pgid %d", r.group.PGID)
		}
	}
}

// The filter looks at pgid, tag and command only, with a regex and a
// fuzzy mode.
func TestFilterMatchesPgidTagAndCommandOnly(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	pgids := func(filter string) []int {
		t.Helper()
		m.cur.tree.filter = filter
		m.cur.tree.rebuild()
		var out []int
		for _, r := range m.cur.tree.rows {
			if r.kind == rowGroup {
				out = append(out, r.group.PGID)
			}
		}
		return out
	}
	cases := []struct {
		filter string
		want   string
	}{
		{"sandtop", "[4100]"}, // its tag; not every group whose origin is sandtop
		{"agent", "[4200]"},   // the tag dsh:agent-7, not the origin "agent"
		{"running", "[]"},     // nor the state
		{"4400", "[4400]"},    // the pgid
		{"SLEEP", "[4123]"},   // the command, any case
		{"re:^sleep [0-9]+$", "[4123]"},
		{"re:^(vim|make)", "[4100 4400]"},
		{"-f slp6", "[4123]"}, // fuzzy: s-l-p-6 in order in "sleep 600"
		{"-f ptnhttp", "[4200]"},
		{"!re:^(vim|make)", "[4123 4200 4300 4500 4600]"},
	}
	for _, c := range cases {
		if got := fmt.Sprint(pgids(c.filter)); got != c.want {
			t.Errorf("filter %q kept %s, want %s", c.filter, got, c.want)
		}
	}
	if got := pgids("re:(sleep"); len(got) != 0 || m.cur.tree.filterErr == nil {
		t.Fatalf("a bad regex kept %v, error %v", got, m.cur.tree.filterErr)
	}
	if v := viewOf(m); !strings.Contains(v, "bad regex") {
		t.Fatalf("a bad regex is not said on screen")
	}
}

func TestMarksVanishWithTheirGroups(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "j", "space", "space") // marks 4100 and 4123
	if len(m.cur.marks) != 2 || !m.cur.marks[4100] || !m.cur.marks[4123] {
		t.Fatalf("marks = %v", m.cur.marks)
	}
	m.cur.firstSeen[4100] = testNow.Add(-time.Minute) // listed long enough to be remembered
	snap := demoSnapshot(testNow)
	snap.Groups = snap.Groups[1:]
	m.Update(snapshotMsg{snap: snap, ch: src.snaps})
	if m.cur.marks[4100] || !m.cur.marks[4123] {
		t.Fatalf("marks after 4100 left = %v, want only 4123", m.cur.marks)
	}
	// The vanished group stays listed as settled for a while, unmarkable.
	g := m.groupByPGID(4100)
	if g == nil || g.State != groupstate.Settled {
		t.Fatalf("pgid 4100 should linger as settled")
	}
}

// TestSettledGroupLeavesOnTheClock: an idle table sends no new snapshot,
// so the clock alone must take a vanished group off the list in time.
func TestSettledGroupLeavesOnTheClock(t *testing.T) {
	now := testNow
	m, src := newTestModel(t, 160, 50, func(o *Options) { o.Now = func() time.Time { return now } })
	m.cur.firstSeen[4100] = now.Add(-time.Minute)
	snap := demoSnapshot(now)
	snap.Groups = snap.Groups[1:]
	m.Update(snapshotMsg{snap: snap, ch: src.snaps})
	if m.groupByPGID(4100) == nil {
		t.Fatalf("pgid 4100 should linger as settled")
	}
	rows := len(m.cur.tree.rows)
	now = now.Add(settledRetention / 2)
	m.Update(clockMsg(now))
	if m.groupByPGID(4100) == nil {
		t.Fatalf("pgid 4100 left before its time")
	}
	now = now.Add(settledRetention)
	m.Update(clockMsg(now))
	if m.groupByPGID(4100) != nil || len(m.cur.tree.rows) >= rows {
		t.Fatalf("pgid 4100 still listed after %v (rows %d, were %d)", settledRetention, len(m.cur.tree.rows), rows)
	}
}

func TestTeardownAsksFirstAndCancelSendsNothing(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "j", "j", "x")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("x did not ask first")
	}
	press(t, m, "enter") // No is preselected
	if _, _, tds := src.calls(); len(tds) != 0 {
		t.Fatalf("teardown ran after cancel: %v", tds)
	}
	if m.dialog != nil || m.focus != focusList {
		t.Fatalf("dialog still open")
	}
	press(t, m, "x", "y")
	if _, _, tds := src.calls(); len(tds) != 1 || tds[0] != 4123 {
		t.Fatalf("teardowns = %v, want [4123]", tds)
	}
	if td := m.cur.teardowns[4123]; td == nil || td.phase != TeardownEmpty || td.finished.IsZero() {
		t.Fatalf("teardown state = %+v", td)
	}
	if !strings.Contains(eventsText(m), "pgid 4123 empty") {
		t.Fatalf("events lack the empty report:\n%s", eventsText(m))
	}
}

func TestTeardownShowsCountdownThenKill(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	m.cur.teardowns[4123] = &teardown{phase: TeardownTerm, started: testNow}
	m.onTeardownProgress(m.cur, 4123, TeardownEvent{PGID: 4123, Phase: TeardownTerm, Members: 2})
	m.onTeardownProgress(m.cur, 4123, TeardownEvent{PGID: 4123, Phase: TeardownWaiting, Remaining: 3 * time.Second})
	if !strings.Contains(viewOf(m), "TERM 3s→KILL") {
		t.Fatalf("view lacks the countdown")
	}
	m.onTeardownProgress(m.cur, 4123, TeardownEvent{PGID: 4123, Phase: TeardownKill, Members: 1})
	if !strings.Contains(viewOf(m), "SIGKILL…") || !strings.Contains(eventsText(m), "SIGKILL to pgid 4123") {
		t.Fatalf("kill phase not shown")
	}
}

func TestSignalMenuPreselectsTERMAndConfirms(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "j", "s")
	menu, ok := m.dialog.(*signalMenu)
	if !ok || menuSignals[menu.cursor].sig != syscall.SIGTERM {
		t.Fatalf("signal menu missing or not on SIGTERM")
	}
	press(t, m, "enter")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("SIGTERM was not confirmed first")
	}
	press(t, m, "y")
	if _, sigs, _ := src.calls(); len(sigs) != 1 || sigs[0] != "4100:SIGTERM" {
		t.Fatalf("signals = %v", sigs)
	}
	// Harmless signals need no confirmation.
	press(t, m, "s", "7", "enter")
	if _, sigs, _ := src.calls(); len(sigs) != 2 || sigs[1] != "4100:SIGCONT" {
		t.Fatalf("signals = %v", sigs)
	}
}

func TestSignalAimsAtTerminalForeground(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "tab", "s", "enter", "y")
	if _, sigs, _ := src.calls(); len(sigs) != 1 || sigs[0] != "fg4600:SIGTERM" {
		t.Fatalf("signals = %v", sigs)
	}
	if !strings.Contains(eventsText(m), "foreground pgid 4601 of terminal 4600") {
		t.Fatalf("event lacks the resolved pgid:\n%s", eventsText(m))
	}
}

func TestBulkTeardownNeedsTheCountTyped(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "j", "space", "space", "X")
	if _, ok := m.dialog.(*bulkDialog); !ok {
		t.Fatalf("X did not open the bulk preview")
	}
	if v := viewOf(m); !strings.Contains(v, "pgid 4100") || !strings.Contains(v, "pgid 4123") {
		t.Fatalf("preview lacks the targets")
	}
	typeText(t, m, "3")
	press(t, m, "enter")
	if _, _, tds := src.calls(); len(tds) != 0 || m.dialog == nil {
		t.Fatalf("a wrong count must not tear down (teardowns %v)", tds)
	}
	typeText(t, m, "2")
	press(t, m, "enter")
	if _, _, tds := src.calls(); len(tds) != 2 {
		t.Fatalf("teardowns = %v, want 2", tds)
	}
	if len(m.cur.marks) != 0 {
		t.Fatalf("marks should clear after a bulk teardown")
	}
}

func TestReadOnlyRefusesEveryMutation(t *testing.T) {
	m, src := newTestModel(t, 160, 50, func(o *Options) { o.ReadOnly = true })
	press(t, m, "j", "s")
	press(t, m, "x")
	press(t, m, "space", "X")
	press(t, m, ":")
	typeText(t, m, "run sleep 1")
	press(t, m, "enter", ":")
	typeText(t, m, "term")
	press(t, m, "enter")
	spawns, sigs, tds := src.calls()
	if len(spawns)+len(sigs)+len(tds) != 0 {
		t.Fatalf("read-only let through spawns=%v signals=%v teardowns=%v", spawns, sigs, tds)
	}
	if got := strings.Count(eventsText(m), "read-only:"); got != 5 {
		t.Fatalf("refusals logged = %d, want 5:\n%s", got, eventsText(m))
	}
	if v := viewOf(m); !strings.Contains(v, "READ-ONLY") || !strings.Contains(v, "refused") {
		t.Fatalf("refusal not visible")
	}
	// Attaching is allowed for viewing, but input and paste are refused.
	press(t, m, "tab", "enter")
	if m.focus != focusAttached {
		t.Fatalf("focus = %v, want attached", m.focus)
	}
	m.Update(tea.PasteMsg{Content: "ls"})
	press(t, m, "a", "ctrl+c")
	if got := src.conn(4600).typed(); got != "" {
		t.Fatalf("read-only sent input %q", got)
	}
}

func TestAttachForwardsKeysAndDetachKeyComesBack(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "tab", "enter")
	if m.focus != focusAttached {
		t.Fatalf("focus = %v, want attached", m.focus)
	}
	if v := viewOf(m); !strings.Contains(v, "ctrl+] detach") {
		t.Fatalf("detach key not on screen")
	}
	press(t, m, "e", "c", "h", "o", "space", "enter", "ctrl+c", "up", "q", "?", ":")
	conn := src.conn(4600)
	want := "echo \r\x03\x1b[Aq?:"
	testwait.NoError(t, waitBound, func() error {
		if got := conn.typed(); got != want {
			return fmt.Errorf("typed %q, want %q", got, want)
		}
		return nil
	})
	// The remote PTY follows the pane.
	w, h := m.detailInner()
	if got := conn.lastResize(); got != [2]int{h, w} {
		t.Fatalf("remote resized to %v, want rows=%d cols=%d", got, h, w)
	}
	press(t, m, "ctrl+]")
	if m.focus != focusList {
		t.Fatalf("detach did not return to the list")
	}
	press(t, m, "z") // zoom is a layout change: it must reach the remote PTY once attached again
	press(t, m, "enter")
	w, h = m.detailInner()
	testwait.For(t, waitBound, "the resize", func() bool { return conn.lastResize() == [2]int{h, w} })
}

func TestDetachKeyIsConfigurable(t *testing.T) {
	m, _ := newTestModel(t, 160, 50, func(o *Options) { o.Keys = map[string][]string{"detach": {"ctrl+g"}} })
	press(t, m, "tab", "enter", "ctrl+]")
	if m.focus != focusAttached {
		t.Fatalf("ctrl+] should be forwarded once detach is rebound")
	}
	if !strings.Contains(viewOf(m), "ctrl+g detach") {
		t.Fatalf("the rebound detach key is not shown")
	}
	press(t, m, "ctrl+g")
	if m.focus != focusList {
		t.Fatalf("ctrl+g did not detach")
	}
}

func TestTermSpawnsAtPaneSizeAndAttaches(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, ":")
	typeText(t, m, "term bash -l")
	press(t, m, "enter")
	w, h := m.detailInner()
	src.mu.Lock()
	sizes := src.termSizes
	src.mu.Unlock()
	if len(sizes) != 1 || sizes[0] != [2]int{h, w} {
		t.Fatalf("terminal spawned at %v, want rows=%d cols=%d", sizes, h, w)
	}
	if m.focus != focusAttached || m.detail.pid != 9001 {
		t.Fatalf("new terminal not attached (focus %v, pid %d)", m.focus, m.detail.pid)
	}
}

func TestRunSplitsArgvWithoutAShell(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	press(t, m, "r")
	typeText(t, m, `sh -c 'trap "" TERM; sleep 60'`)
	press(t, m, "enter")
	spawns, _, _ := src.calls()
	if len(spawns) != 1 || strings.Join(spawns[0], "|") != `sh|-c|trap "" TERM; sleep 60` {
		t.Fatalf("spawns = %q", spawns)
	}
}

func TestQuitSignalsNothing(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	_, cmd := m.Update(keyMsg("q"))
	if cmd == nil {
		t.Fatalf("q returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatalf("q did not quit")
	}
	m.Close()
	if spawns, sigs, tds := src.calls(); len(spawns)+len(sigs)+len(tds) != 0 {
		t.Fatalf("quitting touched remote work")
	}
}

func TestQuitDuringTeardownAsks(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	m.cur.teardowns[4123] = &teardown{phase: TeardownWaiting, started: testNow}
	press(t, m, "q")
	if _, ok := m.dialog.(*confirmDialog); !ok {
		t.Fatalf("quit with a running teardown should ask")
	}
}

func TestGroupOutputStreamsFollowsAndSearches(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	var b strings.Builder
	for i := 0; i < 100; i++ {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%5))
		if i == 42 {
			b.WriteString(" needle")
		}
		b.WriteString("\n")
	}
	src.outputs[4100] = b.String()
	press(t, m, "j", "enter")
	if m.focus != focusOutput {
		t.Fatalf("enter on a group should focus its output")
	}
	testwait.For(t, waitBound, "100 output lines", func() bool { m.drainStreams(); return m.detail.out.count() == 100 })
	if !m.detail.out.follow || m.detail.out.offset != m.detail.out.maxOffset() {
		t.Fatalf("output should follow the tail")
	}
	press(t, m, "k")
	if m.detail.out.follow {
		t.Fatalf("scrolling up must pin the view")
	}
	press(t, m, "/")
	typeText(t, m, "needle")
	press(t, m, "enter")
	o := &m.detail.out
	if len(o.matches) != 1 || o.matches[0] != 42 || o.offset > 42 || o.offset+o.height <= 42 {
		t.Fatalf("search did not reveal line 42: matches %v offset %d", o.matches, o.offset)
	}
	press(t, m, "f")
	if !o.follow {
		t.Fatalf("f should follow again")
	}
}

func TestStaleStreamsAreClosed(t *testing.T) {
	m, _ := newTestModel(t, 160, 50)
	c := newFakeConn()
	_, cmd := m.Update(attachedMsg{gen: m.detailGen - 1, pid: 1, conn: c})
	run(t, m, cmd)
	testwait.For(t, waitBound, "the stale connection closed", func() bool { c.mu.Lock(); defer c.mu.Unlock(); return c.closed })
}

func TestSplitArgs(t *testing.T) {
	cases := map[string]string{
		`sleep 60`:                "sleep|60",
		`  a   b `:                "a|b",
		`sh -c 'echo "hi there"'`: `sh|-c|echo "hi there"`,
		`printf "%s\n" a\ b`:      `printf|%s\n|a b`,
		`x ""`:                    "x|",
		`echo 'it'"'"'s'`:         "echo|it's",
	}
	for in, want := range cases {
		got, err := splitArgs(in)
		if err != nil || strings.Join(got, "|") != want {
			t.Errorf("splitArgs(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := splitArgs(`echo 'open`); err == nil {
		t.Errorf("unterminated quote accepted")
	}
}

func TestKeymapRejectsUnknownAction(t *testing.T) {
	k := DefaultKeyMap()
	if err := k.Apply(map[string][]string{"explode": {"e"}}); err == nil {
		t.Fatalf("unknown action accepted")
	}
}

func eventsText(m *Model) string {
	var b strings.Builder
	for _, e := range m.log.items {
		b.WriteString(e.text)
		b.WriteByte('\n')
	}
	return b.String()
}

func TestHeaderShowsCapabilitiesAndFlagsCompat(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	header := func() string { return strings.SplitN(viewOf(m), "\n", 2)[0] }
	if first := header(); strings.Contains(first, "compat") || !strings.Contains(first, "[groups signal-group replay]") {
		t.Fatalf("extension daemon's header: %q", first)
	}
	info := src.info
	info.Capabilities = strings.Fields("groups watch-groups signal-group foreground terminals read-file list-dir exit-status replay stall-cutoff")
	m.Update(infoMsg{info: info})
	if first := header(); !strings.Contains(first, "[10 capabilities]") {
		t.Fatalf("a list too long for the header is not counted: %q", first)
	}
	info.Capabilities = []string{"compat"}
	m.Update(infoMsg{info: info})
	if first := header(); !strings.Contains(first, "[compat]") {
		t.Fatalf("compat mode not in the header: %q", first)
	}
}

// A group on a terminal shows the terminal's screen, and Enter on it
// attaches, as it does in the terminals pane.
func TestEnterOnATerminalsGroupAttaches(t *testing.T) {
	m, src := newTestModel(t, 160, 50)
	for i := 0; i < 40; i++ {
		if r, ok := m.cur.tree.selected(); ok && r.kind != rowSession && r.group.PGID == 4600 {
			break
		}
		press(t, m, "j")
	}
	if r, ok := m.cur.tree.selected(); !ok || r.kind == rowSession || r.group.PGID != 4600 {
		t.Fatal("could not select the terminal's group")
	}
	press(t, m, "enter")
	if m.focus != focusAttached || m.detail.pid != 4600 {
		t.Fatalf("focus %v on pid %d, want attached to terminal 4600", m.focus, m.detail.pid)
	}
	press(t, m, "x")
	conn := src.conn(4600)
	testwait.NoError(t, waitBound, func() error {
		if got := conn.typed(); got != "x" {
			return fmt.Errorf("typed %q, want x", got)
		}
		return nil
	})
	// Detaching returns to the groups, where the cursor moves again.
	press(t, m, "ctrl+]")
	if m.focus != focusList || m.pane != paneTree {
		t.Fatalf("after detach: focus %v pane %v, want the groups list", m.focus, m.pane)
	}
	press(t, m, "k")
	if r, ok := m.cur.tree.selected(); ok && r.kind != rowSession && r.group.PGID == 4600 {
		t.Fatal("the cursor did not move after detaching")
	}
}

func TestExitColumnNamesSignals(t *testing.T) {
	for _, c := range []struct {
		e    *sandbox.Exit
		want string
	}{
		{nil, "-"}, {&sandbox.Exit{Code: 3}, "3"}, {&sandbox.Exit{Code: 137, Signal: "SIGKILL"}, "KILL"},
		{&sandbox.Exit{Signal: "SIGTERM"}, "TERM"}, {&sandbox.Exit{Signal: "SIGWINCH"}, "sig28"}, {&sandbox.Exit{Code: 2, Signal: "SIGsignal 99"}, "2"}, // WINCH is too wide; an unknown name leaves the code
	} {
		if got := exitString(c.e); got != c.want {
			t.Errorf("exitString(%+v) = %q, want %q", c.e, got, c.want)
		}
	}
}

// A finished group shows what it kept, read back by its pgid (the table
// names no leader for it), then how it ended and when.
func TestFinishedGroupDetailShowsKeptOutputAndExit(t *testing.T) {
	m, src := newTestModel(t, 160, 45)
	snap := demoSnapshot(testNow)
	for i := range snap.Groups {
		if snap.Groups[i].PGID == 4500 {
			snap.Groups[i].LeaderPID = 0 // as the seam reports a finished group
		}
	}
	src.outputs[4500] = "ok  \tsandbox/api\nFAIL\tsandbox/db\n"
	src.details = map[string]GroupDetails{"/run/sandtop/groups/7a1e": {Ended: testNow.Add(-2 * time.Minute)}}
	m.Update(snapshotMsg{gen: 0, snap: snap, ch: src.snaps})
	for range 20 {
		if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4500 {
			break
		}
		press(t, m, "down")
	}
	if g := m.cur.tree.selectedGroup(); g == nil || g.PGID != 4500 {
		t.Fatal("could not select the finished group")
	}
	testwait.For(t, waitBound, "the output to end", func() bool { m.drainStreams(); return m.detail.ended })
	view := viewOf(m)
	end := "── exited 2 · ended " + testNow.Add(-2*time.Minute).Local().Format("15:04:05") + " ──"
	api, db, exit := strings.Index(view, "sandbox/api"), strings.Index(view, "FAIL    sandbox/db"), strings.Index(view, end)
	if api < 0 || db < api || exit < db || strings.Contains(view, "not started through the daemon") {
		t.Fatalf("detail of a finished group: want its two lines, then %q:\n%s", end, view)
	}
}

// A finished group that kept nothing says so in one line, naming the
// command that reads what a group kept, above how it ended.
func TestFinishedGroupThatKeptNothingSaysSo(t *testing.T) {
	m, src := newTestModel(t, 160, 45)
	snap := demoSnapshot(testNow)
	m.Update(snapshotMsg{gen: 0, snap: snap, ch: src.snaps})
	for range 20 {
		if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4500 {
			break
		}
		press(t, m, "down")
	}
	testwait.For(t, waitBound, "the output to end", func() bool { m.drainStreams(); return m.detail.ended })
	view := viewOf(m)
	note, exit := strings.Index(view, "It kept no output: 'sandtop logs 4500' has none either."), strings.Index(view, "── exited 2 ──")
	if note < 0 || exit < note {
		t.Fatalf("detail of a finished group that kept nothing:\n%s", view)
	}
}

// TestClockTicksDrawWhatTheyShould: a tick that changes nothing on screen
// may hand back the last frame, but after every tick the screen is what a
// fresh drawing would be: ages, a status that expires, a teardown's label
// that leaves.
func TestClockTicksDrawWhatTheyShould(t *testing.T) {
	now := testNow
	m, src := newTestModel(t, 160, 50, func(o *Options) { o.Now = func() time.Time { return now } })
	tick := func(d time.Duration) string {
		t.Helper()
		now = now.Add(d)
		m.Update(clockMsg(now))
		v := viewOf(m)
		if fresh := plain(m.draw()); v != fresh {
			t.Fatalf("after a tick to +%v the screen is stale:\n%s\nwant:\n%s", now.Sub(testNow), v, fresh)
		}
		return v
	}
	viewOf(m)
	first := tick(40 * time.Second) // the youngest group is past its first minute
	if v := tick(time.Second); v != first {
		t.Fatalf("a second changed a screen of ages in minutes:\n%s\n%s", first, v)
	}
	now = now.Add(time.Second)
	if m.Update(clockMsg(now)); !m.reuseView {
		t.Fatalf("a quiet tick draws the screen again")
	}
	tick(0)
	if v := tick(time.Minute); v == first {
		t.Fatalf("a minute went by and no age moved")
	}
	m.setStatus(levelInfo, "a passing note")
	withStatus := viewOf(m)
	if !strings.Contains(withStatus, "a passing note") {
		t.Fatalf("status not shown")
	}
	tick(time.Second)
	if v := tick(10 * time.Second); strings.Contains(v, "a passing note") {
		t.Fatalf("the status outlived its time")
	}
	press(t, m, "j", "j", "x", "y") // tears 4123 down
	if _, _, tds := src.calls(); len(tds) != 1 {
		t.Fatalf("teardowns = %v", tds)
	}
	viewOf(m)
	tick(7 * time.Second) // the status it left expires
	tick(5 * time.Second) // then its finished label leaves the row
	if len(m.cur.teardowns) != 0 {
		t.Fatalf("teardown still listed: %v", m.cur.teardowns)
	}
}
