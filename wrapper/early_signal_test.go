package wrapper

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A group signal that lands while the inner half is still starting the
// child, or before it waits, must still be published as a signal: bash can
// drop a dead job from its table before any trap lists it, which once
// turned these SIGTERM deaths into "exit 143".
func TestWrapperPublishesSignalWhenGroupIsSignalledEarly(t *testing.T) {
	for i := range 60 {
		spill := NoSpill
		if i%2 == 1 {
			spill = 1000 // tee and head join the group and die with it
		}
		dir := StateDir(t.TempDir(), "p1")
		inv := Invocation{StateDir: dir, Argv: []string{"/bin/sh", "-c", "exec cat /dev/zero"}, StdoutSpill: spill, StderrSpill: NoSpill}
		cmd, args, err := inv.Command("/bin/bash")
		if err != nil {
			t.Fatal(err)
		}
		payload, _ := EnvironmentPayload([]string{"PATH=" + os.Getenv("PATH")})
		c := exec.Command(cmd, args...)
		c.Env = []string{"PATH=" + os.Getenv("PATH")}
		c.Stdin = strings.NewReader(string(payload))
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := c.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		br := bufio.NewReader(out)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		pgid, err := ParsePublishedLine(strings.TrimSuffix(line, "\n"))
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(i%4) * time.Millisecond)
		if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, br)
		_ = c.Wait()
		code := strings.TrimSpace(readOr(filepath.Join(dir, ExitCodeFile)))
		sig := strings.TrimSpace(readOr(filepath.Join(dir, SignalFile)))
		n, err := strconv.Atoi(sig)
		if err != nil || code != strconv.Itoa(128+n) {
			t.Fatalf("run %d: exit-code %q, signal %q: a signal death was published as an exit code", i, code, sig)
		}
		if ws := c.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || int(ws.Signal()) != n {
			t.Fatalf("run %d: the outer half ended with %v, not signal %d", i, ws, n)
		}
	}
}

func readOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
