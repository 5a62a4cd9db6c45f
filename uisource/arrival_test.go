package uisource

import (
	"context"
	"errors"
	"fmt"
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

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/seam"
	"sandtop/sandbox"
	"sandtop/testwait"
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
	g := findGroup(nextSnapshotWhere(t, watch, "the group", func(s sandbox.Snapshot) bool { return findGroup(s, pgid) != nil }), pgid)
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

// newCompatSource is a source over a stock-envd surface; supervisor is the
// RuntimeConfig's SupervisorBinary (seam.NoSupervisor: the bash wrapper).
func newCompatSource(t *testing.T, supervisor string) *backendSource {
	t.Helper()
	env := daemontest.Start(t, daemon.Config{Compat: true})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rt, err := seam.NewRuntime(ctx, env.Client, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/tmp",
		RuntimeRoot: env.RuntimeRoot, SupervisorBinary: supervisor})
	if err != nil {
		t.Fatalf("runtime: %v", err)
	}
	src, err := New(rt, Options{Name: "test", Cwd: "/tmp", Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	bs := src.(*backendSource)
	t.Cleanup(func() { bs.Close() })
	return bs
}

// readPieces reads s until want has appeared, with a deadline.
func readPieces(t *testing.T, s ui.OutputStream, want string) []ui.OutputPiece {
	t.Helper()
	done := make(chan []ui.OutputPiece, 1)
	go func() {
		var got []ui.OutputPiece
		var text strings.Builder
		for {
			p, err := s.Next()
			if len(p.Data) > 0 {
				got = append(got, ui.OutputPiece{At: p.At, Data: append([]byte(nil), p.Data...)})
				text.Write(p.Data)
			}
			if err != nil || strings.Contains(text.String(), want) {
				done <- got
				return
			}
		}
	}()
	select {
	case got := <-done:
		var text strings.Builder
		for _, p := range got {
			text.Write(p.Data)
		}
		if !strings.Contains(text.String(), want) {
			t.Fatalf("stream ended without %q: %q", want, text.String())
		}
		return got
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %q", want)
		return nil
	}
}

// groupLeader waits for pgid's row and returns its leader.
func groupLeader(t *testing.T, src ui.Source, ctx context.Context, pgid int) int {
	t.Helper()
	watch, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	g := findGroup(nextSnapshotWhere(t, watch, "the group", func(s sandbox.Snapshot) bool {
		g := findGroup(s, pgid)
		return g != nil && g.LeaderPID > 0
	}), pgid)
	return g.LeaderPID
}

// TestOutputWithoutKeptTimesComesUntimed: under the bash wrapper on a
// stock envd nothing keeps arrival times, so the stream's pieces carry
// none (the pane stamps them as received and says so).
func TestOutputWithoutKeptTimesComesUntimed(t *testing.T) {
	src := newCompatSource(t, seam.NoSupervisor)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", "sleep 1; echo late; exec sleep 60"}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
	s, err := src.Output(ctx, groupLeader(t, src, ctx, pgid))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, p := range readPieces(t, s, "late\n") {
		if !p.At.IsZero() {
			t.Fatalf("piece %q has a time (%s) though nothing kept one", p.Data, p.At)
		}
	}
}

// TestOutputKeptBySupervisorOnStockEnvdIsTimed: on a stock envd, which
// keeps no replay, a group under sandtop's standalone supervisor still
// shows what it wrote before the pane opened, each piece with its time.
func TestOutputKeptBySupervisorOnStockEnvdIsTimed(t *testing.T) {
	src := newCompatSource(t, "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	before := time.Now()
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", "echo early; exec sleep 60"}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
	leader := groupLeader(t, src, ctx, pgid)
	awaitKeptOutput(t, src, ctx, leader) // "early" is written before the pane opens
	s, err := src.Output(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readPieces(t, s, "early\n")
	if p := got[0]; string(p.Data) != "early\n" || p.At.Before(before) || p.At.After(time.Now()) {
		t.Fatalf("first piece %q at %s: want early, timed when it was written", p.Data, p.At)
	}
}

// awaitKeptOutput waits until the group of leader has kept some output.
func awaitKeptOutput(t *testing.T, src *backendSource, ctx context.Context, leader int) {
	t.Helper()
	rd := src.rt.OutputLog(findStateDir(t, src, ctx, leader))
	testwait.NoError(t, 20*time.Second, func() error {
		segs, err := rd.Next(ctx, false)
		if err == nil && len(segs) == 0 {
			err = errors.New("no segments")
		}
		if err != nil {
			return fmt.Errorf("the group kept no output: %v", err)
		}
		return nil
	})
}

func findStateDir(t *testing.T, src *backendSource, ctx context.Context, leader int) string {
	t.Helper()
	g, ok := src.groupOf(ctx, leader)
	if !ok || g.stateDir == "" {
		t.Fatalf("no state directory for leader %d", leader)
	}
	return g.stateDir
}

// TestOutputGoesLiveWhenTheSpillIsFull: a group whose spill reached its cap
// keeps writing; the pane's stream says the sandbox keeps no more and goes
// on with the live output instead of stopping.
func TestOutputGoesLiveWhenTheSpillIsFull(t *testing.T) {
	src := newDaemonSource(t).(*backendSource)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	script := `head -c 3000 /dev/zero | tr '\0' x; echo; i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.2; done`
	h, err := src.rt.Spawn(ctx, seam.SpawnSpec{Argv: []string{"sh", "-c", script}, Cwd: "/tmp", Grace: time.Second,
		Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.OutputCollect(64<<10, 2048), Stderr: seam.OutputCollect(64<<10, 2048)}})
	if err != nil {
		t.Fatal(err)
	}
	pgid := h.Pgid()
	h.Detach()
	t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
	leader := groupLeader(t, src, ctx, pgid)
	// Right after the spawn the shim may not have kept anything yet, and
	// a pane opened then follows the live output alone.
	awaitKeptOutput(t, src, ctx, leader)
	s, err := src.Output(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*keptStream); !ok {
		t.Fatalf("a group with kept, marked output streams as %T", s)
	}
	var text strings.Builder
	noticed := false
	for _, p := range readPieces(t, s, "tick") {
		if strings.Contains(string(p.Data), "keeps no more") {
			noticed = true
		}
		if strings.Contains(string(p.Data), "tick") && (!noticed || !p.At.IsZero()) {
			t.Fatalf("live output %q (at %s) came before the notice or with a kept time", p.Data, p.At)
		}
		text.Write(p.Data)
	}
	if !strings.HasPrefix(text.String(), strings.Repeat("x", 2048)) || !noticed {
		t.Fatalf("want the kept 2048 bytes, then the notice, then live output:\n%q", text.String())
	}
}

// TestOutputBeyondTheBudgetIsNotReadFromTheStart: a group that kept more
// than a pane could hold is shown from the daemon's replay, not read back
// from its first byte.
func TestOutputBeyondTheBudgetIsNotReadFromTheStart(t *testing.T) {
	src := newDaemonSource(t).(*backendSource)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pgid, err := src.Spawn(ctx, []string{"sh", "-c", fmt.Sprintf("head -c %d /dev/zero; echo; echo done; exec sleep 60", keptBudget+1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = src.Signal(context.Background(), pgid, syscall.SIGKILL) })
	leader := groupLeader(t, src, ctx, pgid)
	dir := findStateDir(t, src, ctx, leader)
	testwait.For(t, 20*time.Second, "the spill to grow past the budget", func() bool { return !src.keptFits(ctx, dir) })
	s, err := src.Output(ctx, leader)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, ok := s.(*keptStream); ok {
		t.Fatal("more than the budget kept, yet the stream reads it from the start")
	}
	readPieces(t, s, "done\n")
}
