package uisource

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
)

// TestOutputPaneShowsWhenEachLineArrived: a group wrote "a", then "b" 1.2 s
// later. Opened in the TUI only afterwards, the output pane's T shows each
// line's arrival time in the sandbox (not the time the pane opened), and
// ctrl+s saves those times.
func TestOutputPaneShowsWhenEachLineArrived(t *testing.T) {
	src := newDaemonSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", "echo a; sleep 1.2; echo b; exec sleep 60"}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
	// Wait until both lines were written, then open the TUI.
	watch, _ := src.Watch(ctx)
	g := findGroup(nextSnapshotWhere(t, watch, "the group", func(s ui.Snapshot) bool { return findGroup(s, pgid) != nil }), pgid)
	r, err := src.Output(ctx, g.LeaderPID)
	if err != nil {
		t.Fatal(err)
	}
	readUntil(t, streamReader{r}, "b\n")
	r.Close()
	opened := time.Now()

	exports := t.TempDir()
	m := ui.NewModel(ui.Options{Source: src, Theme: themes.MustLoad("dark"), ExportDir: exports})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 45))
	scr := screentest.New(tm.Output(), 160, 45)
	key := func(k tea.KeyPressMsg) { tm.Send(k) }
	char := func(s string) {
		for _, c := range s {
			key(tea.KeyPressMsg{Code: c, Text: string(c)})
		}
	}
	pg := strconv.Itoa(pgid)
	scr.Wait(t, 20*time.Second, "+"+pg, "running")
	char("/")
	char(pg)
	key(tea.KeyPressMsg{Code: tea.KeyEnter})
	char("G")
	scr.Wait(t, 10*time.Second, "Output · pgid "+pg)
	key(tea.KeyPressMsg{Code: tea.KeyEnter})
	char("T")
	stamp := regexp.MustCompile(`(\d\d:\d\d:\d\d) ([ab])\s`)
	screen := scr.WaitFunc(t, "both lines stamped", 20*time.Second, func(s string) bool { return len(stamp.FindAllString(s, -1)) == 2 })
	if !strings.Contains(screen, "· times") || strings.Contains(screen, "as received") {
		t.Fatalf("the pane should show kept arrival times, not times as received:\n%s", screen)
	}
	shown := map[string]time.Time{}
	for _, sm := range stamp.FindAllStringSubmatch(screen, -1) {
		at, err := time.ParseInLocation("15:04:05", sm[1], time.Local)
		if err != nil {
			t.Fatal(err)
		}
		shown[sm[2]] = at
	}
	if d := shown["b"].Sub(shown["a"]); d < time.Second {
		t.Fatalf("a shown at %s, b at %s: want b at least 1 s after a (arrival times, not when the pane opened):\n%s",
			shown["a"].Format("15:04:05"), shown["b"].Format("15:04:05"), screen)
	}

	key(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	scr.Wait(t, 10*time.Second, "save output to")
	key(tea.KeyPressMsg{Code: tea.KeyEnter})
	scr.Wait(t, 10*time.Second, "saved 2 lines")
	files, _ := filepath.Glob(filepath.Join(exports, "*.log"))
	if len(files) != 1 {
		t.Fatalf("want one saved file in %s, got %v", exports, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	saved := map[string]time.Time{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		ts, text, _ := strings.Cut(l, " ")
		at, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil {
			t.Fatalf("saved line %q: %v", l, err)
		}
		saved[text] = at
	}
	if len(saved) != 2 || saved["b"].Sub(saved["a"]) < time.Second || !saved["b"].Before(opened) {
		t.Fatalf("saved %q: want a and b with their arrival times, b at least 1 s after a and both before the TUI opened (%s)", b, opened.Format(time.RFC3339Nano))
	}
	tm.Send(tea.QuitMsg{})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
