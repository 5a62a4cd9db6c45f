package wrapper

import (
	"os"
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
			spill = 1000 // tee and head join the group
		}
		w := startWrapped(t, []string{"/bin/sh", "-c", "exec cat /dev/zero"}, spill)
		time.Sleep(time.Duration(i%4) * time.Millisecond)
		w.signal(t, syscall.SIGTERM)
		fact := w.fact(t)
		sig, _, _ := strings.Cut(strings.TrimPrefix(fact, "signal "), " ")
		n, err := strconv.Atoi(sig)
		if err != nil || fact != signalFact(syscall.Signal(n)) {
			t.Fatalf("run %d: published %s: a signal death was published as an exit code", i, fact)
		}
		if ws := w.cmd.ProcessState.Sys().(syscall.WaitStatus); !ws.Signaled() || int(ws.Signal()) != n {
			t.Fatalf("run %d: the outer half ended with %v, not signal %d", i, ws, n)
		}
	}
}

func readOr(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}
