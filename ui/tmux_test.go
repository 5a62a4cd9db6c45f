package ui

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// tmux is a program in a tmux server of its own, driven through one
// control-mode client (tmux -C): keys go in and the screen is read over
// that one connection. A tmux process per look cost more CPU than the
// program under test, and the end-to-end tests run side by side.
type tmux struct {
	t              *testing.T
	server, target string
	in             io.Writer
	blocks         chan block // replies to this client's commands, in order
}

// block is a control-mode reply: the command's output lines, or its error.
type block struct {
	out string
	err bool
}

// tmuxReply bounds the wait for a reply: tmux answers at once, so only a
// hang reaches it.
const tmuxReply = 20 * time.Second

// startTmux runs line (a shell command) from dir in a tmux server named
// server, in session of w×h, and attaches a control client to it. The
// server and the client are this test's children, so they and the
// program die with the test binary.
func startTmux(t *testing.T, server, session, dir string, w, h int, line string) *tmux {
	t.Helper()
	srv := exec.Command("tmux", "-D", "-L", server)
	dieWithTest(srv, syscall.SIGKILL)
	if err := srv.Start(); err != nil {
		t.Fatalf("start tmux server: %v", err)
	}
	t.Cleanup(func() {
		_ = exec.Command("tmux", "-L", server, "kill-server").Run()
		_ = srv.Process.Kill()
		_ = srv.Wait()
	})
	// The server takes a moment to listen.
	testwait.NoError(t, 15*time.Second, func() error {
		out, err := exec.Command("tmux", "-L", server, "new-session", "-d", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h), "-s", session, "-c", dir, line).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux new-session: %v: %s", err, out)
		}
		return nil
	})
	ctl := exec.Command("tmux", "-L", server, "-C", "attach-session", "-t", session, "-f", "ignore-size,no-output")
	dieWithTest(ctl, syscall.SIGKILL)
	in, err := ctl.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := ctl.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := ctl.Start(); err != nil {
		t.Fatalf("start tmux control client: %v", err)
	}
	t.Cleanup(func() {
		_ = ctl.Process.Kill()
		_ = ctl.Wait()
	})
	x := &tmux{t: t, server: server, target: session, in: in, blocks: make(chan block, 16)}
	go x.read(out)
	return x
}

// read turns the control client's output into replies. A reply to this
// client's command is framed by %begin and %end (or %error) lines whose
// last field is 1; everything else is a notification, or the reply to the
// attach. The channel closes when the client exits: the session ended.
func (x *tmux) read(r io.Reader) {
	defer close(x.blocks)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var cur *strings.Builder
	mine := false
	for sc.Scan() {
		line := sc.Text()
		f := strings.Fields(line)
		switch {
		case cur == nil && len(f) == 4 && f[0] == "%begin":
			cur, mine = &strings.Builder{}, f[3] == "1"
		case cur != nil && len(f) == 4 && (f[0] == "%end" || f[0] == "%error"):
			if mine {
				x.blocks <- block{out: cur.String(), err: f[0] == "%error"}
			}
			cur = nil
		case cur != nil:
			cur.WriteString(line)
			cur.WriteByte('\n')
		}
	}
}

// run sends one tmux command (its words quoted for tmux) and returns its
// output.
func (x *tmux) run(args ...string) string {
	x.t.Helper()
	words := make([]string, len(args))
	for i, a := range args {
		if strings.Contains(a, "'") {
			x.t.Fatalf("tmux word %q: a single quote cannot be quoted for tmux", a)
		}
		words[i] = "'" + a + "'"
	}
	if _, err := io.WriteString(x.in, strings.Join(words, " ")+"\n"); err != nil {
		x.t.Fatalf("tmux %v: %v", args, err)
	}
	select {
	case b, ok := <-x.blocks:
		if !ok {
			x.t.Fatalf("tmux %v: the session has ended", args)
		}
		if b.err {
			x.t.Fatalf("tmux %v: %s", args, b.out)
		}
		return b.out
	case <-time.After(tmuxReply):
		x.t.Fatalf("tmux %v: no reply within %s", args, tmuxReply)
	}
	return ""
}

// keys presses keys, named as tmux names them (Enter, C-], G).
func (x *tmux) keys(keys ...string) { x.run(append([]string{"send-keys", "-t", x.target}, keys...)...) }

// text types s, byte by byte.
func (x *tmux) text(s string) {
	args := []string{"send-keys", "-t", x.target, "-H"}
	for i := range len(s) {
		args = append(args, hex.EncodeToString([]byte{s[i]}))
	}
	x.run(args...)
}

func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", x.target) }

func (x *tmux) wait(what, want string) {
	x.t.Helper()
	x.waitFunc(what, func(s string) bool { return strings.Contains(s, want) })
}

func (x *tmux) waitFunc(what string, ok func(string) bool) {
	x.t.Helper()
	testwait.NoError(x.t, 20*time.Second, func() error {
		if s := x.screen(); !ok(s) {
			return fmt.Errorf("waiting for %s; last screen:\n%s", what, s)
		}
		return nil
	})
}

// quit leaves the TUI and waits for it to exit, which ends the session
// and with it the control client.
func (x *tmux) quit() {
	x.t.Helper()
	x.keys("q")
	testwait.For(x.t, 10*time.Second, "the TUI to exit", func() bool {
		select {
		case _, open := <-x.blocks:
			return !open
		default:
			return false
		}
	})
}
