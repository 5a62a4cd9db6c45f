package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/golden"

	"sandtop/testwait"
)

// Golden views at two widths, colour profile pinned to ASCII (helpers_test
// init). Rewrite with: go test ./ui -run TestGolden -update
func TestGoldenViews(t *testing.T) {
	t.Parallel() // each scene has a model and source of its own
	scenes := map[string]func(t *testing.T, m *Model, src *fakeSource){
		"overview": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "j", "space")
			m.cur.events.add(testNow, levelInfo, "SIGTERM to pgid 4123 (1 member)")
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
			m.cur.teardowns[4123] = &teardown{phase: TeardownWaiting, started: testNow, deadline: testNow.Add(3 * time.Second)}
			m.cur.events.add(testNow, levelInfo, "SIGTERM to pgid 4123 (1 member)")
		},
		"bulk_preview": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "space", "space", "X")
		},
		"describe": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "j", "j", "j", "j", "d") // 4200, an agent's group
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
			testwait.NoError(t, waitBound, func() error {
				if s := m.detail.term.term.Snapshot(); s.Line(1) != "hi" {
					return fmt.Errorf("the terminal shows %q", s.Text())
				}
				return nil
			})
		},
		"sorted_by_cpu": func(t *testing.T, m *Model, src *fakeSource) {
			press(t, m, "P")
		},
		"output_times_wrapped": func(t *testing.T, m *Model, src *fakeSource) {
			src.outputs[4100] = "ok  \tsandbox/events\t0.201s\n\x1b[31mFAIL\x1b[0m\tsandbox/api\a\n" + strings.Repeat("0123456789", 30) + "\n"
			press(t, m, "j", "enter")
			testwait.For(t, waitBound, "three output lines", func() bool { m.drainStreams(); return m.detail.out.count() == 3 })
			press(t, m, "T", "w")
		},
		"read_only_refusal": func(t *testing.T, m *Model, src *fakeSource) {
			m.opts.ReadOnly = true
			press(t, m, "j", "x")
		},
	}
	for name, scene := range scenes {
		for _, size := range [][2]int{{80, 24}, {160, 45}} {
			t.Run(fmt.Sprintf("%s_%d", name, size[0]), func(t *testing.T) {
				m, src := newTestModel(t, size[0], size[1])
				scene(t, m, src)
				// The detail pane's stream ends on a goroutine of its own: the
				// view is of the state after that, however loaded the machine.
				if m.focus != focusAttached {
					testwait.For(t, waitBound, "the detail pane's stream to end", func() bool { m.drainStreams(); return m.detail.pump == nil })
				}
				view := viewOf(m)
				// Help and quit stay in reach at any width, whatever the
				// footer holds besides.
				if foot := view[strings.LastIndexByte(view, '\n')+1:]; m.dialog == nil && m.focus != focusAttached && m.status == "" &&
					(!strings.Contains(foot, "? help") || !strings.Contains(foot, "q quit")) {
					t.Errorf("footer lacks ? help or q quit: %q", foot)
				}
				golden.RequireEqual(t, []byte(view))
			})
		}
	}
}
