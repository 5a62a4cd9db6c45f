package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// serve --memory-dumps DIR (hidden; bench -sdk-memory) writes where its
// memory is on each SIGUSR1: the Go runtime's classes beside the kernel's
// view, and a heap profile.
func TestServeWritesMemoryDumpOnSIGUSR1(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "stmem-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock, dumps := filepath.Join(dir, "s.sock"), filepath.Join(dir, "dumps")
	serve := exec.Command(sandtopBin, "serve", "--listen", "unix:"+sock, "--state-dir", filepath.Join(dir, "state"), "--kill-on-exit", "--memory-dumps", dumps)
	serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	serve.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	testwait.For(t, 20*time.Second, "the daemon's socket", func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
	if err := serve.Process.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	heap := filepath.Join(dumps, "memory-1.heap")
	testwait.For(t, 10*time.Second, "the heap profile", func() bool {
		st, err := os.Stat(heap)
		return err == nil && st.Size() > 0
	})
	text, err := os.ReadFile(filepath.Join(dumps, "memory-1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/memory/classes/metadata/mspan/inuse:bytes ", "/memory/classes/heap/objects:bytes ", "smaps/Rss:kB ", "smaps/Anonymous:kB "} {
		if !strings.Contains(string(text), want) {
			t.Errorf("the dump has no %q line:\n%s", want, text)
		}
	}
}
