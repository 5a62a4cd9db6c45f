package ui

import (
	"fmt"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"
)

// Golden views at two widths, colour profile pinned to ASCII (helpers_test
// init). Rewrite with: go test ./ui -run TestGolden -update
func TestGoldenViews(t *testing.T) {
	scenes := map[string]func(t *testing.T, m *Model, src *fakeSource){
		"overview": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "j", "space")
			m.events.add(testNow, levelInfo, "SIGTERM to pgid 4123 (1 members)")
		},
		"expanded_group": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "l")
		},
		"signal_menu": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "s")
		},
		"confirm_teardown": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "j", "x")
		},
		"teardown_countdown": func(t *testing.T, m *Model, src *fakeSource) {
			m.teardowns[4123] = &teardown{phase: TeardownWaiting, started: testNow, deadline: testNow.Add(3 * time.Second)}
			m.events.add(testNow, levelInfo, "SIGTERM to pgid 4123 (1 members)")
		},
		"bulk_preview": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "space", "space", "X")
		},
		"help": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "?")
		},
		"palette": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, ":")
			typeText(t, m, "r")
		},
		"filter": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "/")
			typeText(t, m, "sleep")
		},
		"attached": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "tab", "enter")
			conn := src.conn(4600)
			go func() { _, _ = conn.pw.Write([]byte("\x1b[2J\x1b[H$ echo hi\r\nhi\r\n$ ")) }()
			waitFor(t, func() bool { return m.detail.term.term.Snapshot().Line(1) == "hi" }, func() string { return m.detail.term.term.Snapshot().Text() })
		},
		"read_only_refusal": func(t *testing.T, m *Model, src *fakeSource) {
			m.opts.ReadOnly = true
			press(t, m, "j", "x")
		},
	}
	for name, scene := range scenes {
		for _, size := range [][2]int{{100, 34}, {160, 50}} {
			t.Run(fmt.Sprintf("%s_%d", name, size[0]), func(t *testing.T) {
				m, src := newTestModel(t, size[0], size[1])
				scene(t, m, src)
				golden.RequireEqual(t, []byte(m.View()))
			})
		}
	}
}
