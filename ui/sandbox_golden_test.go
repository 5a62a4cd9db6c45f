package ui

import (
	"fmt"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/golden"
)

// TestGoldenContextPicker pins the fleet view: the one on screen starred,
// each sandbox's counts (groups, terminals, waiting, stuck), and an
// unreachable one with its reason. Rewrite with: go test ./ui -run TestGolden -update
func TestGoldenContextPicker(t *testing.T) {
	for _, size := range [][2]int{{100, 34}, {160, 50}} {
		t.Run(fmt.Sprintf("picker_%d", size[0]), func(t *testing.T) {
			m, _, b := newContextsModel(t)
			m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			press(t, m, "j", "space")
			switchCtx(t, m, "beta", b)
			m.cur.teardowns[4123] = &teardown{phase: TeardownWaiting, started: testNow, deadline: testNow}
			press(t, m, "c")
			golden.RequireEqual(t, []byte(viewOf(m)))
		})
	}
}
