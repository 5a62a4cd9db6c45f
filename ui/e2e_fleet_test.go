package ui

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/e2b/e2bfake"
)

// TestEndToEndFleetInTmux opens the shipped binary on a team of 30 E2B
// sandboxes (3 paused) at 80x24 and at 160x48: it opens on the fleet view
// and shows every running sandbox's counts without a visit, and its debug
// log says so in the line the fleet benchmark reads.
func TestEndToEndFleetInTmux(t *testing.T) {
	e := newE2E(t)
	me, err := user.Current()
	if err != nil {
		t.Fatal(err)
	}
	d := daemontest.StartTCP(t, daemon.Config{Token: "envd-tok"})
	fake := e2bfake.New(t, "e2b_0123abcd")
	for i := range 30 {
		sb := e2bfake.Sandbox{ID: fmt.Sprintf("sbx%02d", i), Alias: "agent", Token: d.Token, EnvdURL: d.Addr, Metadata: map[string]string{"team": "t"}}
		if i%10 == 0 {
			sb.State = "paused"
		}
		fake.Add(sb)
	}
	cfg := fmt.Sprintf("grace = \"1s\"\n[targets.team]\ne2b_metadata = { team = \"t\" }\nuser = %q\n", me.Username)
	if err := os.WriteFile(filepath.Join(e.dir, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "E2B_API_KEY="+fake.APIKey, "E2B_API_URL="+fake.URL, "E2B_SANDBOX_URL="+d.Addr)
	for _, size := range [][2]int{{80, 24}, {160, 48}} {
		log := filepath.Join(e.dir, fmt.Sprintf("fleet-%d.log", size[0]))
		tm := e.tuiSized(fmt.Sprintf("fleet%d", size[0]), size[0], size[1], "--target", "team", "--log-file", log)
		tm.wait("every count shown", "counts 27/27")
		screen := tm.screen()
		t.Logf("%dx%d:\n%s", size[0], size[1], screen)
		for _, want := range []string{"e2b:sbx01", "paused", "GROUPS"} {
			if !strings.Contains(screen, want) {
				t.Errorf("%dx%d: %q not on screen", size[0], size[1], want)
			}
		}
		tm.quit()
		b, _ := os.ReadFile(log)
		if !strings.Contains(string(b), "fleet: counts shown for 27 of 27 sandboxes") {
			t.Errorf("the debug log lacks the fleet line:\n%s", b)
		}
	}
	if calls := fake.MutatingCalls(); len(calls) != 0 {
		t.Errorf("lifecycle calls: %+v", calls)
	}
}
