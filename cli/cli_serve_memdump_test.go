package cli

import (
	"os"
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
	dumps := filepath.Join(t.TempDir(), "dumps")
	serve, _ := startServeOnSocket(t, nil, "--memory-dumps", dumps)
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
