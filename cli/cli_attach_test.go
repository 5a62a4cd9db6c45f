package cli

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"sandtop/testwait"
)

// ptyOutput collects what the attached sandtop writes to its terminal.
type ptyOutput struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (p *ptyOutput) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.Write(b)
}

func (p *ptyOutput) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

func TestAttachThroughAPTYTypesSeesEchoAndDetaches(t *testing.T) {
	t.Parallel()
	out := mustSandtop(t, "term", "--", "bash", "--norc", "--noprofile", "-i")
	var pid int
	if _, err := fmt.Sscanf(out, "terminal pid %d", &pid); err != nil {
		t.Fatalf("term printed %q: %v", out, err)
	}
	cmd := exec.Command(sandtopBin, "attach", itoa(pid))
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = testEnv
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var seen ptyOutput
	go func() { _, _ = copyTo(&seen, tty) }()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	testwait.For(t, 20*time.Second, "the detach hint", func() bool { return strings.Contains(seen.String(), "detach with ctrl+]") })
	// $((6*7)) proves the remote shell evaluated what we typed rather than
	// the terminal echoing it back.
	if _, err := tty.Write([]byte("echo attached-$((6*7))\r")); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the remote shell's answer", func() bool { return strings.Contains(seen.String(), "attached-42") })
	if _, err := tty.Write([]byte{0x1d}); err != nil { // Ctrl-]
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("attach exited with %v\n%s", err, seen.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("attach did not detach on Ctrl-]\n%s", seen.String())
	}
	// The copier may still be draining the PTY after the process exited.
	testwait.For(t, 10*time.Second, "the detach message", func() bool { return strings.Contains(seen.String(), "keeps running") })
	// Detaching left the shell running.
	found := false
	for _, term := range listJSON(t).Terminals {
		found = found || term.PID == pid
	}
	if !found {
		t.Fatalf("terminal %d is gone after detach", pid)
	}
}

func copyTo(w *ptyOutput, r interface{ Read([]byte) (int, error) }) (int64, error) {
	buf := make([]byte, 4096)
	var n int64
	for {
		k, err := r.Read(buf)
		if k > 0 {
			_, _ = w.Write(buf[:k])
			n += int64(k)
		}
		if err != nil {
			return n, err
		}
	}
}

// An attach sizes the terminal to the attaching screen; detaching gives it
// back the size it had, unless --keep-size.
func TestAttachGivesTheTerminalItsSizeBack(t *testing.T) {
	t.Parallel()
	out := mustSandtop(t, "term", "--", "bash", "--norc", "--noprofile", "-i")
	var pid int
	if _, err := fmt.Sscanf(out, "terminal pid %d", &pid); err != nil {
		t.Fatalf("term printed %q: %v", out, err)
	}
	size := func() [2]int {
		for _, term := range listJSON(t).Terminals {
			if term.PID == pid {
				return [2]int{term.Rows, term.Cols}
			}
		}
		t.Fatalf("terminal %d not listed", pid)
		return [2]int{}
	}
	before := size()
	if before == [2]int{30, 100} {
		t.Fatalf("the terminal already has the attaching screen's size")
	}
	attach := func(args ...string) {
		t.Helper()
		cmd := exec.Command(sandtopBin, append([]string{"attach", itoa(pid)}, args...)...)
		cmd.Env = testEnv
		tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 30, Cols: 100})
		if err != nil {
			t.Fatal(err)
		}
		defer tty.Close()
		var seen ptyOutput
		go func() { _, _ = copyTo(&seen, tty) }()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		testwait.For(t, 20*time.Second, "the detach hint", func() bool { return strings.Contains(seen.String(), "detach with ctrl+]") })
		testwait.For(t, 20*time.Second, "the attach's size", func() bool { return size() == [2]int{30, 100} })
		if _, err := tty.Write([]byte{0x1d}); err != nil { // Ctrl-]
			t.Fatal(err)
		}
		select {
		case err := <-exited:
			if err != nil {
				t.Fatalf("attach exited with %v\n%s", err, seen.String())
			}
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			t.Fatalf("attach did not detach on Ctrl-]\n%s", seen.String())
		}
	}
	attach()
	if got := size(); got != before {
		t.Fatalf("after detach the terminal is %v, want its %v back", got, before)
	}
	attach("--keep-size")
	if got := size(); got != [2]int{30, 100} {
		t.Fatalf("--keep-size: after detach the terminal is %v, want 30x100", got)
	}
}
