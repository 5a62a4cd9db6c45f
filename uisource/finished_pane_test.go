package uisource

import (
	"context"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"sandtop/backend/seam"
	"sandtop/sandbox"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
)

// paneTUI is the real TUI on src in a terminal of w×h, with the group
// pgid filtered and selected.
type paneTUI struct {
	tm  *teatest.TestModel
	scr *screentest.Screen
}

func openPaneOn(t *testing.T, src ui.Source, pgid, w, h int) *paneTUI {
	t.Helper()
	m := ui.NewModel(ui.Options{Source: src, Theme: themes.MustLoad("dark"), Grace: 2 * time.Second})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(w, h))
	p := &paneTUI{tm: tm, scr: screentest.New(tm.Output(), w, h)}
	t.Cleanup(func() {
		tm.Send(tea.QuitMsg{})
		tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
	})
	pg := strconv.Itoa(pgid)
	// On a stock envd the table holds every process of the machine: the
	// group is found by the filter, not by scrolling.
	p.scr.Wait(t, 20*time.Second, "● connected")
	p.chars("/" + pg)
	p.key(tea.KeyPressMsg{Code: tea.KeyEnter})
	// G moves to the last row; it may reach the list before the group's
	// row does. On a stock envd the filter may also hold a foreign row
	// (another process whose line has the same digits), so from the last
	// row k walks up a few rows before G starts over, until the pane
	// names the group.
	var pressed time.Time
	ups := -1
	p.scr.WaitFunc(t, "the group selected", 30*time.Second, func(s string) bool {
		if strings.Contains(s, "Output · pgid "+pg+" ") {
			// Only once the keys have settled: a G or k sent just before
			// this screen was drawn still moves the cursor (to a foreign
			// row below the group, say) after it.
			return time.Since(pressed) > 500*time.Millisecond
		}
		if time.Since(pressed) > 300*time.Millisecond {
			if ups >= 0 && ups < 8 {
				p.chars("k")
				ups++
			} else {
				p.chars("G")
				ups = 0
			}
			pressed = time.Now()
		}
		return false
	})
	return p
}

func (p *paneTUI) key(k tea.KeyPressMsg) { p.tm.Send(k) }

func (p *paneTUI) chars(s string) {
	for _, c := range s {
		p.key(tea.KeyPressMsg{Code: c, Text: string(c)})
	}
}

// inOrder says whether every want appears in s, each after the one before.
func inOrder(s string, want ...string) bool {
	for _, w := range want {
		i := strings.Index(s, w)
		if i < 0 {
			return false
		}
		s = s[i+len(w):]
	}
	return true
}

// awaitExit waits for the watch to list pgid finished with code.
func awaitExit(t *testing.T, src ui.Source, pgid, code int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	nextSnapshotWhere(t, watch, "the group finished with exit "+strconv.Itoa(code), func(s sandbox.Snapshot) bool {
		g := findGroup(s, pgid)
		return g != nil && !g.Live() && g.Exit != nil && g.Exit.Code == code
	})
}

// TestFinishedGroupPaneShowsItsOutputAndExit: a group prints known lines,
// one on stderr, and exits 3 before the TUI opens. Selected in the TUI,
// its detail pane shows those lines in the order they came and,
// below them, that it exited 3: on sandtop's daemon, and on a stock envd
// under sandtop's supervisor and under the bash wrapper (whose output is
// kept without arrival marks).
func TestFinishedGroupPaneShowsItsOutputAndExit(t *testing.T) {
	planes := []struct {
		name string
		src  func(t *testing.T) ui.Source
	}{
		{"daemon", func(t *testing.T) ui.Source { return newDaemonSource(t) }},
		{"compat", func(t *testing.T) ui.Source { return newCompatSource(t, "") }},
		{"compat-wrapper", func(t *testing.T) ui.Source { return newCompatSource(t, seam.NoSupervisor) }},
	}
	for _, plane := range planes {
		t.Run(plane.name, func(t *testing.T) {
			src := plane.src(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The pauses keep stdout and stderr in that order under the
			// wrapper too, which keeps no arrival marks.
			pgid, err := src.Spawn(ctx, []string{"sh", "-c", "echo alpha-line; sleep 0.2; echo beta-line >&2; sleep 0.2; echo gamma-line; exit 3"}, "")
			if err != nil {
				t.Fatal(err)
			}
			awaitExit(t, src, pgid, 3)
			p := openPaneOn(t, src, pgid, 120, 36)
			screen := p.scr.WaitFunc(t, "the kept lines, then the exit", 30*time.Second, func(s string) bool {
				return inOrder(s, "Output · pgid", "alpha-line", "gamma-line", "── exited 3")
			})
			if !strings.Contains(screen, "beta-line") {
				t.Fatalf("the line written to stderr is missing:\n%s", screen)
			}
			if plane.name != "compat-wrapper" && !inOrder(screen, "alpha-line", "beta-line", "gamma-line") {
				t.Fatalf("the lines are not in the order they came:\n%s", screen)
			}
		})
	}
}

// TestTeardownKeepsOutputAndAppendsOutcome: a group prints a line, and
// another when SIGTERM reaches it. Torn down from the TUI while its
// output is on screen, the pane keeps both lines and adds, below them,
// the teardown's steps and how the group ended: on sandtop's daemon, and
// on a stock envd, where the leader the pane follows (sandtop's
// supervisor) is not the group's pgid.
func TestTeardownKeepsOutputAndAppendsOutcome(t *testing.T) {
	planes := []struct {
		name string
		src  func(t *testing.T) ui.Source
	}{
		{"daemon", func(t *testing.T) ui.Source { return newDaemonSource(t) }},
		{"compat", func(t *testing.T) ui.Source { return newCompatSource(t, "") }},
	}
	for _, plane := range planes {
		t.Run(plane.name, func(t *testing.T) {
			src := plane.src(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pgid, err := src.Spawn(ctx, []string{"sh", "-c", `trap 'echo got-term-line; exit 5' TERM; echo ready-line; while :; do sleep 0.1; done`}, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
			// A decoy whose command line holds the group's pgid: on a
			// stock envd it is in the table too, after the group, and the
			// filter keeps both.
			decoy := exec.Command("sh", "-c", "sleep 300; :", "decoy-"+strconv.Itoa(pgid))
			decoy.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
			if err := decoy.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = decoy.Process.Kill(); _ = decoy.Wait() })
			p := openPaneOn(t, src, pgid, 100, 40)
			p.scr.Wait(t, 20*time.Second, "ready-line", "running")
			p.chars("xy") // tear down, and confirm
			screen := p.scr.WaitFunc(t, "the output, the teardown's steps and the exit below it", 30*time.Second, func(s string) bool {
				return inOrder(s, "ready-line", "got-term-line", "teardown: SIGTERM", "teardown: group empty", "── exited 5")
			})
			if strings.Contains(screen, "It kept no output") {
				t.Fatalf("the pane lost the output it showed:\n%s", screen)
			}
		})
	}
}
