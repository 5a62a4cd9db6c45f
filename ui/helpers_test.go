package ui

import (
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
	m := NewModel(opts)
	t.Cleanup(m.Close)
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
// following batches. Commands that wait (ticks, frames, the watch) are
// given a short while and dropped if they are still waiting.
func run(t testing.TB, m *Model, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil {
		return
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(300 * time.Millisecond):
		return
	}
	switch msg := msg.(type) {
	case nil:
	case tea.BatchMsg:
		for _, c := range msg {
			run(t, m, c)
		}
	case tea.QuitMsg:
	case clockMsg, reconnectMsg:
	default:
		_, next := m.Update(msg)
		run(t, m, next)
	}
}

// plain is drawn text without its styling.
func plain(s string) string { return ansi.Strip(s) }
