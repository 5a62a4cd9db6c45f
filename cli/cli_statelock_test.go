package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// One daemon per state directory: a second serve on the same one (as a
// serve without --state-dir meets the local sandbox's) exits at once,
// naming the first one's pid, and takes nothing from it: the first still
// answers on its socket.
func TestSecondServeOnAStateDirRefusesToStart(t *testing.T) {
	dir, err := os.MkdirTemp("", "stl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	state := filepath.Join(dir, "state")
	serve := func(ctx context.Context, sock string) *exec.Cmd {
		c := exec.CommandContext(ctx, sandtopBin, "serve", "--listen", "unix:"+filepath.Join(dir, sock), "--state-dir", state, "--kill-on-exit")
		c.Env = append(os.Environ(), "HOME="+dir)
		c.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		return c
	}
	first := serve(context.Background(), "first.sock")
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = first.Process.Signal(syscall.SIGTERM); _ = first.Wait() })
	testwait.For(t, 20*time.Second, "the first daemon's socket", func() bool {
		_, err := os.Stat(filepath.Join(dir, "first.sock"))
		return err == nil
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	out, err := serve(ctx, "second.sock").CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the second serve on %s kept running: %s", state, out)
	}
	if err == nil || !strings.Contains(string(out), "pid "+strconv.Itoa(first.Process.Pid)) || !strings.Contains(string(out), state) {
		t.Fatalf("the second serve: %v\n%s\nwant a refusal naming %s and the first daemon's pid %d", err, out, state, first.Process.Pid)
	}
	if _, err := os.Stat(filepath.Join(dir, "second.sock")); err == nil {
		t.Fatal("the refused daemon left a socket")
	}
	if r := sandtopEnv(t, testEnv, "--socket", filepath.Join(dir, "first.sock"), "ls"); r.code != 0 {
		t.Fatalf("the first daemon no longer answers: exit %d %s", r.code, r.stderr)
	}
}
