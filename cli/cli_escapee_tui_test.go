package cli

import (
	"context"
	"fmt"
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
	"sandtop/stuck"
	"sandtop/testwait"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/ui/screentest"
	"sandtop/uisource"
)

// A group whose leader has exited and whose only live process left it
// (setsid) is still live: ls and the TUI both say leader-exited, and the
// TUI marks it, signals it (the signal reaches the escapee) and tears it
// down (which ends the escapee), on a real daemon.
func TestEscapeeOnlyGroupInTheTUIAndLs(t *testing.T) {
	d := daemontest.Start(t, daemon.Config{})
	on := func(args ...string) string {
		t.Helper()
		r := sandtopEnv(t, testEnv, append([]string{"--socket", d.Socket}, args...)...)
		if r.code != 0 {
			t.Fatalf("sandtop %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	var pid, pgid int
	if out := on("run", "--", "sh", "-c", "setsid sleep 307 & exit 0"); func() error {
		_, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid)
		return err
	}() != nil {
		t.Fatalf("run printed %q", out)
	}
	var g listGroup
	testwait.For(t, 20*time.Second, "ls to list the group with its leader gone and one escapee", func() bool {
		var ok bool
		g, ok = findGroup(decodeList(t, on("ls", "-o", "json")), pgid)
		return ok && len(g.Escapees) == 1 && strings.Join(g.Escapees[0].Argv, " ") == "sleep 307"
	})
	escapee := g.Escapees[0].PID
	t.Cleanup(func() {
		if procState(escapee) != "" {
			_ = syscall.Kill(escapee, syscall.SIGKILL)
		}
	})
	if g.State != "leader-exited" {
		t.Fatalf("ls: state %q, want leader-exited: %+v", g.State, g)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rt, err := seam.NewRuntime(ctx, d.Dial(), seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: "/"})
	if err != nil {
		t.Fatal(err)
	}
	// With the stuck rules on, a narrow tree says "⚠ leader gone" where
	// the state goes; off, the state itself is shown.
	src, err := uisource.New(rt, uisource.Options{Cwd: "/", Grace: time.Second, Interval: 100 * time.Millisecond, Stuck: &stuck.Rules{Off: true}})
	if err != nil {
		t.Fatal(err)
	}
	m := ui.NewModel(ui.Options{Source: src, Theme: themes.MustLoad("dark"), Grace: time.Second})
	t.Cleanup(m.Close)
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 45))
	scr := screentest.New(tm.Output(), 160, 45)
	key := func(k tea.KeyPressMsg) { tm.Send(k) }
	char := func(s string) {
		for _, c := range s {
			key(tea.KeyPressMsg{Code: c, Text: string(c)})
		}
	}
	enter := func() { key(tea.KeyPressMsg{Code: tea.KeyEnter}) }
	pg, esc := strconv.Itoa(pgid), strconv.Itoa(escapee)
	// lineWith finds a screen line holding every one of words.
	lineWith := func(words ...string) func(string) bool {
		return func(s string) bool {
			for _, l := range strings.Split(s, "\n") {
				all := true
				for _, w := range words {
					all = all && strings.Contains(l, w)
				}
				if all {
					return true
				}
			}
			return false
		}
	}

	char("/" + pg)
	enter()
	scr.WaitFunc(t, "the group's row saying leader-exited", 20*time.Second, lineWith(pg, "leader-exited"))
	char("l") // open the group: its escapee is listed under it
	scr.WaitFunc(t, "the escapee under its group", 10*time.Second, lineWith(esc, "escapee", "sleep 307"))

	key(tea.KeyPressMsg{Code: tea.KeySpace, Text: " "})
	scr.Wait(t, 10*time.Second, "1 marked")

	// SIGSTOP (the menu's 6th, which asks first) reaches the escapee;
	// SIGCONT (7th, which does not) lets it go on.
	char("s")
	scr.Wait(t, 10*time.Second, "SIGSTOP", "pgid "+pg)
	char("6")
	enter()
	scr.Wait(t, 10*time.Second, "Send SIGSTOP?")
	char("y")
	testwait.For(t, 10*time.Second, "the escapee to stop", func() bool { return procState(escapee) == "T" })
	char("s")
	scr.Wait(t, 10*time.Second, "SIGCONT")
	char("7")
	enter()
	testwait.For(t, 10*time.Second, "the escapee to go on", func() bool { return procState(escapee) == "S" })

	// The marked group's teardown ends the escapee.
	char("X")
	scr.Wait(t, 10*time.Second, "Tear down 1 marked groups")
	char("1")
	enter()
	testwait.For(t, 20*time.Second, "the teardown to end the escapee", func() bool {
		s := procState(escapee)
		return s == "" || s == "Z"
	})
	scr.WaitFunc(t, "the teardown to report the group empty", 20*time.Second, lineWith(pg, "empty"))

	testwait.For(t, 20*time.Second, "ls to list the group settled", func() bool {
		g, ok := findGroup(decodeList(t, on("ls", "-o", "json")), pgid)
		return !ok || g.State == "settled" && len(g.Escapees) == 0
	})
	tm.Send(tea.QuitMsg{})
	tm.WaitFinished(t, teatest.WithFinalTimeout(10*time.Second))
}
