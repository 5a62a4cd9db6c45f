package ui

import (
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"sandtop/themes"
)

// testNow is the fixed clock of model tests and goldens.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// viewOf is the screen as text: goldens and assertions must not depend
// on colours, which Bubble Tea fits to the terminal when it draws.
func viewOf(m *Model) string { return ansi.Strip(m.screen()) }

// newTestModel builds a model over a fake source, sized w×h, with the demo
// snapshot applied.
func newTestModel(t testing.TB, w, h int, mod ...func(*Options)) (*Model, *fakeSource) {
	t.Helper()
	src := newFakeSource()
	opts := Options{Source: src, SandboxName: "demo", Theme: themes.MustLoad("dark"), Now: func() time.Time { return testNow }}
	for _, f := range mod {
		f(&opts)
	}
	m := newModel(t, opts)
	m.Init()
	m.Update(infoMsg{info: src.info})
	m.Update(watchStartedMsg{gen: 0, ch: src.snaps})
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m.Update(snapshotMsg{gen: 0, snap: demoSnapshot(testNow), ch: src.snaps})
	return m, src
}

// press sends keys (names as Bubble Tea spells them) and runs the commands
// they return.
func press(t testing.TB, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		run(t, m, m.handleKey(keyMsg(k)))
	}
}

func keyMsg(k string) tea.KeyPressMsg {
	named := map[string]tea.KeyPressMsg{
		"enter": {Code: tea.KeyEnter}, "esc": {Code: tea.KeyEscape}, "up": {Code: tea.KeyUp}, "down": {Code: tea.KeyDown},
		"left": {Code: tea.KeyLeft}, "right": {Code: tea.KeyRight}, "tab": {Code: tea.KeyTab},
		"shift+tab": {Code: tea.KeyTab, Mod: tea.ModShift}, "space": {Code: tea.KeySpace, Text: " "},
		"backspace": {Code: tea.KeyBackspace}, "f5": {Code: tea.KeyF5}, "pgdown": {Code: tea.KeyPgDown}, "pgup": {Code: tea.KeyPgUp},
		"home": {Code: tea.KeyHome}, "end": {Code: tea.KeyEnd},
	}
	if msg, ok := named[k]; ok {
		return msg
	}
	if c, ok := strings.CutPrefix(k, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: []rune(c)[0], Mod: tea.ModCtrl}
	}
	if c, ok := strings.CutPrefix(k, "alt+"); ok {
		return tea.KeyPressMsg{Code: []rune(c)[0], Mod: tea.ModAlt}
	}
	return tea.KeyPressMsg{Code: []rune(k)[0], Text: k}
}

// typeText types each rune.
func typeText(t testing.TB, m *Model, s string) {
	t.Helper()
	for _, r := range s {
		if r == ' ' {
			press(t, m, "space")
			continue
		}
		press(t, m, string(r))
	}
}

// run executes a command and feeds its messages back into the model,
// following batches. A command must finish within cmdDeadline, or the
// test fails naming where the command was made; the only ones not run are
// those that wait for something from outside the model with no end of
// their own (see waits), and the clocks that repeat for ever (see
// testTick), which a test delivers itself when it means to.
func run(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	runWithin(t, m, cmd, cmdDeadline)
}

// runWithin is run with a deadline of its own, for run's own tests.
func runWithin(t testing.TB, m *Model, cmd tea.Cmd, deadline time.Duration) {
	t.Helper()
	if cmd == nil {
		return
	}
	origin := cmdOrigin(cmd)
	if waiting(origin) {
		return
	}
	if strings.HasPrefix(origin, "charm.land/bubbletea/v2.Tick.") {
		t.Fatalf("the model waits on the wall clock (%s): build it with Options.Tick = testTick", origin)
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(deadline):
		t.Fatalf("command made by %s did not finish within %s", origin, deadline)
		return
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			runWithin(t, m, c, deadline)
		}
	case tea.QuitMsg:
	case timerMsg:
		fired := msg.fire(testNow.Add(msg.after))
		if repeats(fired) {
			return
		}
		_, next := m.Update(fired)
		runWithin(t, m, next, deadline)
	default:
		_, next := m.Update(msg)
		runWithin(t, m, next, deadline)
	}
}

// waitBound bounds a test's wait for what a goroutine of the model does
// (a stream pumped, a key written): only a hang reaches it, and loaded
// machines take seconds.
const waitBound = 30 * time.Second

// cmdDeadline bounds a command that should finish: the fakes answer at
// once, so only a hang reaches it, however loaded the machine.
const cmdDeadline = 20 * time.Second

// waits name the commands that block until something outside the model
// happens, with no end of their own: the watch (a test feeds snapshots
// with Update), the frame that follows streamed output (a test drains the
// streams) and the arrivals channel (a test sends arrivalsMsg). A renamed
// one is run like any other command and fails the test at the deadline.
var waits = []string{".nextSnapshotCmd.func", ".waitFrameCmd.func", ".awaitArrivals.func"}

func waiting(origin string) bool {
	for _, w := range waits {
		if strings.Contains(origin, w) {
			return true
		}
	}
	return false
}

// cmdOrigin names the function that made cmd (a closure is named after
// it), for failures and for waits.
func cmdOrigin(cmd tea.Cmd) string {
	if f := runtime.FuncForPC(reflect.ValueOf(cmd).Pointer()); f != nil {
		return f.Name()
	}
	return "an unknown function"
}

// testTick is the models' timer in tests (Options.Tick): instead of
// waiting, its command hands run the timer, which fires it at once.
func testTick(d time.Duration, fn func(time.Time) tea.Msg) tea.Cmd {
	return func() tea.Msg { return timerMsg{after: d, fire: fn} }
}

type timerMsg struct {
	after time.Duration
	fire  func(time.Time) tea.Msg
}

// repeats says whether msg is a clock that sets itself again each time
// it fires (the clock, the providers' refresh) or a retry after a lost
// watch: firing those at once would never end, so run leaves them to the
// test, which delivers clockMsg or providerTickMsg when it means to.
func repeats(msg tea.Msg) bool {
	if sm, ok := msg.(scopedMsg); ok {
		msg = sm.msg
	}
	switch msg.(type) {
	case clockMsg, providerTickMsg, reconnectMsg:
		return true
	}
	return false
}

// newModel is NewModel for tests: the test's timer, closed at cleanup.
func newModel(t testing.TB, opts Options) *Model {
	t.Helper()
	if opts.Tick == nil {
		opts.Tick = testTick
	}
	m := NewModel(opts)
	t.Cleanup(m.Close)
	return m
}

// plain is drawn text without its styling.
func plain(s string) string { return ansi.Strip(s) }
