package shim

import (
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// The walk through children files and the scan of all of /proc find the
// same tree: a child, a grandchild and a great-grandchild started by a
// shell, each still running.
func TestDescendantsWalkMatchesScan(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sh -c 'sleep 61 & wait' & wait")
	// A group of its own, killed whole at cleanup; the shell dies with the
	// test binary even when go test's timeout kills it (the sleeps, orphaned
	// then, end within a minute).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	pids := func(ps []Proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.Pid)
		}
		sort.Ints(out)
		return out
	}
	testwait.NoError(t, 10*time.Second, func() error {
		walked, scanned := pids(Descendants(os.Getpid())), pids(descendantsByScan(os.Getpid()))
		// sh, sleep 60, sh, sleep 61 (and nothing else of this test's).
		if len(walked) < 4 || len(walked) != len(scanned) {
			return fmt.Errorf("walk %v, scan %v: want the same four or more", walked, scanned)
		}
		for i := range walked {
			if walked[i] != scanned[i] {
				t.Fatalf("walk %v, scan %v", walked, scanned)
			}
		}
		return nil
	})
}
