// Package screenshots regenerates the README's PNGs from real runs; see
// generate.sh. The test is skipped unless SANDTOP_SCREENSHOTS=1.
package screenshots

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/seam"
	"sandtop/themes"
	"sandtop/ui"
	"sandtop/uisource"
	"sandtop/vt"
)

const cols, rows = 160, 48

func TestScreenshots(t *testing.T) {
	if os.Getenv("SANDTOP_SCREENSHOTS") == "" {
		t.Skip("set SANDTOP_SCREENSHOTS=1 (or run screenshots/generate.sh) to regenerate the PNGs")
	}
	env := daemontest.Start(t, daemon.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := t.TempDir()
	rt, err := seam.NewRuntime(ctx, env.Client, seam.RuntimeConfig{PollInterval: 50 * time.Millisecond, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	src, err := uisource.New(rt, uisource.Options{Name: "dev-sandbox", Target: "unix:/run/user/1000/sandtop/d.sock", Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	// A busy sandbox: a build-like loop with output, servers, a stopped
	// job, a stubborn group that ignores SIGTERM, and a terminal.
	// Tagged, as agents and CI tag their work.
	for _, w := range []struct {
		tag  string
		argv []string
	}{
		{"ci:build", []string{"bash", "-c", `for i in $(seq 1 400); do case $((i % 9)) in 0) printf '\033[32mok\033[0m\tsandbox/unit%d\t0.%03ds\n' $i $((i * 7 % 1000));; 4) printf '\033[33mwarning:\033[0m unit %d: unused variable\n' $i;; *) printf '\033[2m[build]\033[0m compiling unit %d of 400\n' $i;; esac; sleep 0.05; done; sleep 600`}},
		{"", []string{"sleep", "3600"}},
		{"agent:worker", []string{"bash", "-c", `trap "" TERM; exec -a stubborn-worker sleep 3600`}},
		{"agent:tests", []string{"bash", "-c", `sleep 900 & sleep 900 & wait`}},
		{"dev:server", []string{"python3", "-m", "http.server", "--bind", "127.0.0.1", "0"}},
	} {
		if _, err := rt.Spawn(ctx, seam.SpawnSpec{Argv: w.argv, Cwd: dir, Tag: w.tag, Grace: 5 * time.Second,
			Stdio: seam.Stdio{Stdin: seam.StdinIgnore(), Stdout: seam.OutputCollect(64 << 10), Stderr: seam.OutputCollect(64 << 10)}}); err != nil {
			t.Fatalf("spawn %v: %v", w.argv, err)
		}
	}
	stopped, err := src.Spawn(ctx, []string{"sleep", "1800"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	waitForMember(t, src, stopped, "sleep") // stop sleep itself, not the wrapper before its exec
	_ = src.Signal(ctx, stopped, 19)        // SIGSTOP
	if _, err := src.SpawnTerminal(ctx, []string{"bash", "--norc"}, rows-11, cols*42/100-2); err != nil {
		t.Fatal(err)
	}

	dark, light := themes.MustLoad("dark"), themes.MustLoad("light")
	newModel := func(th themes.Theme) (*ui.Model, *driver) {
		m := ui.NewModel(ui.Options{Source: src, SandboxName: "dev-sandbox", Theme: th, Grace: 5 * time.Second})
		t.Cleanup(m.Close)
		d := newDriver(t, m, cols, rows)
		d.until("the busy table", 15*time.Second, func(v string) bool {
			return strings.Contains(v, "stopped") && strings.Contains(v, "http.s") && strings.Contains(v, "bash --norc")
		})
		return m, d
	}
	shot := func(name string, d *driver, th themes.Theme) {
		f, err := os.Create(name + ".png")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := vt.RenderANSIStringPNG(f, d.m.View().Content, cols, rows, ui.VTPalette(th)); err != nil {
			t.Fatal(err)
		}
	}

	// Overview with a group's output in the detail pane.
	_, d := newModel(dark)
	d.keys(runes("/"))
	d.keys(runes("b"), runes("u"), runes("i"), runes("l"), runes("d"), key(tea.KeyEnter), runes("j"))
	d.until("build output", 10*time.Second, func(v string) bool { return strings.Contains(v, "compiling unit 1") })
	d.keys(key(tea.KeyEscape))
	d.settle(1500 * time.Millisecond)
	shot("overview", d, dark)

	// Sorted by CPU, with the tags.
	d.keys(runes("P"))
	d.settle(1200 * time.Millisecond)
	shot("sorted-tagged", d, dark)
	d.keys(runes("I")) // back to by pgid

	// The build's output with the time each line arrived.
	d.keys(key(tea.KeyEnter), runes("T"))
	d.settle(800 * time.Millisecond)
	shot("output-timestamps", d, dark)
	d.keys(runes("T"), key(tea.KeyEscape))

	// Help.
	d.keys(runes("?"))
	d.settle(100 * time.Millisecond)
	shot("help", d, dark)
	d.keys(key(tea.KeyEscape))

	// Signal menu on the stubborn worker.
	d.keys(runes("/"))
	for _, r := range "stubborn" {
		d.keys(runes(string(r)))
	}
	d.keys(key(tea.KeyEnter), runes("j"))
	d.until("the stubborn group selected", 5*time.Second, func(v string) bool { return strings.Contains(v, "Output · pgid") })
	d.keys(runes("s"))
	d.settle(300 * time.Millisecond)
	shot("signal-menu", d, dark)
	d.keys(key(tea.KeyEscape))

	// Teardown in progress: TERM sent, counting down to KILL.
	d.keys(runes("x"), runes("y"))
	d.until("the countdown", 5*time.Second, func(v string) bool { return strings.Contains(v, "s→KILL") })
	d.settle(1200 * time.Millisecond)
	shot("teardown", d, dark)
	d.until("the group empty", 15*time.Second, func(v string) bool { return strings.Contains(v, "empty after") })

	// Attached terminal running top.
	d.keys(key(tea.KeyEscape), key(tea.KeyTab), key(tea.KeyEnter))
	d.until("attached", 10*time.Second, func(v string) bool { return strings.Contains(v, "attached to terminal") })
	for _, r := range "top -d 1" {
		d.keys(runes(string(r)))
	}
	d.keys(key(tea.KeyEnter))
	d.until("top running", 10*time.Second, func(v string) bool { return strings.Contains(v, "load average") })
	d.settle(1500 * time.Millisecond)
	shot("attached-top", d, dark)
	d.keys(runes("q"))
	d.keys(tea.KeyPressMsg{Code: ']', Mod: tea.ModCtrl})

	// Light theme overview.
	_, dl := newModel(light)
	dl.keys(runes("j"), runes("l"))
	dl.settle(1200 * time.Millisecond)
	shot("light", dl, light)
}

// waitForMember watches the sandbox until group pgid has a member whose
// command is comm.
func waitForMember(t *testing.T, src ui.Source, pgid int, comm string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	snaps, err := src.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for snap := range snaps {
		for _, g := range snap.Groups {
			for _, p := range g.Members {
				if g.PGID == pgid && p.Comm == comm {
					return
				}
			}
		}
	}
	t.Fatalf("group %d never ran %s", pgid, comm)
}
