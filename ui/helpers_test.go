package ui

import (
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"sandtop/themes"
)

// testNow is the fixed clock of model tests and goldens.
var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func init() {
	// Goldens must not depend on the terminal the tests run in.
	lipgloss.SetColorProfile(termenv.Ascii)
}

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

func keyMsg(k string) tea.KeyMsg {
	named := map[string]tea.KeyType{
		"enter": tea.KeyEnter, "esc": tea.KeyEsc, "up": tea.KeyUp, "down": tea.KeyDown,
		"left": tea.KeyLeft, "right": tea.KeyRight, "tab": tea.KeyTab, "shift+tab": tea.KeyShiftTab,
		"space": tea.KeySpace, "backspace": tea.KeyBackspace, "ctrl+c": tea.KeyCtrlC,
		"ctrl+]": tea.KeyCtrlCloseBracket, "ctrl+g": tea.KeyCtrlG, "f5": tea.KeyF5,
	}
	if t, ok := named[k]; ok {
		if t == tea.KeySpace {
			return tea.KeyMsg{Type: t, Runes: []rune{' '}} // as Bubble Tea reads it
		}
		return tea.KeyMsg{Type: t}
	}
	return tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
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
