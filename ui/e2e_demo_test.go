package ui

import (
	"fmt"
	"sandtop/testwait"
	"strings"
	"testing"
	"time"
)

// TestDemoFailedJobInTmux runs 'sandtop demo' (the shipped binary) on a
// daemon in a tmux window of 80x24. Selected in the TUI, the demo's failed
// job, which ended before the TUI opened, shows its four lines in its
// detail pane and, below them, that it exited 3; its row says so too.
func TestDemoFailedJobInTmux(t *testing.T) {
	e := newE2E(t)
	e.serve("d.sock")
	tm := e.tuiSized("demo", 80, 24, "--socket", "d.sock", "demo")
	tm.wait("the TUI connected", "● connected")
	tm.keys("/")
	tm.text("demo:migrate")
	tm.keys("Enter")
	tm.wait("the filter applied", "· filter demo:migrate")
	// G may reach the list before the filtered row does: pressed again
	// until the pane shows the job.
	var pressed time.Time
	var screen string
	testwait.NoError(t, 30*time.Second, func() error {
		screen = tm.screen()
		// stdout and stderr are two pipes, so the error line's place
		// among the others is not a fact the test can hold the daemon to.
		if inOrder(screen, "Output · pgid",
			"running migrations (3 pending)",
			"001_create_accounts ... ok",
			"002_add_index_users_email ...",
			"── exited 3") &&
			inOrder(screen, "Output · pgid", `error: relation "users" does not exist`, "── exited 3") {
			return nil
		}
		if time.Since(pressed) > 300*time.Millisecond {
			tm.keys("G")
			pressed = time.Now()
		}
		return fmt.Errorf("the failed job's output and exit in its pane; screen:\n%s", screen)
	})
	t.Logf("80x24:\n%s", screen)
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "demo:migrate") && strings.Contains(l, "sandtop") && !strings.Contains(l, "exited 3") {
			t.Fatalf("the job's row does not say it exited 3:\n%s", screen)
		}
	}
	tm.quit()
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
