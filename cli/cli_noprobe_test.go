package cli

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
)

// TestCommandsWriteNoTerminalQueries runs commands that do not open the
// TUI on a PTY that answers nothing, as script(1), CI runners and coding
// agents' terminals are. A terminal library that asks the terminal for its
// background colour (OSC 11) or the cursor position (DSR 6) at start-up
// writes the query there and waits seconds for an answer that never comes.
func TestCommandsWriteNoTerminalQueries(t *testing.T) {
	mustSandtop(t, "ls") // the daemon is up: the timings below are the commands'
	queries := map[string]string{"OSC 11 (background colour)": "\x1b]11;?", "DSR 6 (cursor position)": "\x1b[6n"}
	for _, args := range [][]string{
		{"ls"}, {"ls", "-o", "json"}, {"version"}, {"daemon", "status"}, {"config", "path"}, {"--help"}, {"logs", "999999"},
	} {
		t.Run(strings.Join(args, "_"), func(t *testing.T) {
			cmd := exec.Command(sandtopBin, args...)
			cmd.Env = testEnv
			began := time.Now()
			tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
			if err != nil {
				t.Fatal(err)
			}
			defer tty.Close()
			var seen ptyOutput
			copied := make(chan struct{})
			go func() { _, _ = copyTo(&seen, tty); close(copied) }()
			exited := make(chan struct{})
			go func() { _ = cmd.Wait(); close(exited) }()
			// A query that nobody answers costs its library a 5 s timeout;
			// the bound is well below it and well above a loaded machine's
			// start-up.
			select {
			case <-exited:
			case <-time.After(4 * time.Second):
				_ = cmd.Process.Kill()
				<-exited
				t.Errorf("sandtop %v still running after 4 s on a PTY that answers nothing", args)
			}
			took := time.Since(began)
			select {
			case <-copied: // the PTY's last bytes are read
			case <-time.After(5 * time.Second):
			}
			out := seen.String()
			for name, q := range queries {
				if i := strings.Index(out, q); i >= 0 {
					t.Errorf("sandtop %v wrote the terminal query %s: %q", args, name, out[max(0, i-20):min(len(out), i+20)])
				}
			}
			t.Logf("sandtop %v returned in %v", args, took.Round(time.Millisecond))
		})
	}
}
