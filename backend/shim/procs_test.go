package shim

import (
	"os"
	"os/exec"
	"sort"
	"testing"
	"time"
)

// The walk through children files and the scan of all of /proc find the
// same tree: a child, a grandchild and a great-grandchild started by a
// shell, each still running.
func TestDescendantsWalkMatchesScan(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sh -c 'sleep 61 & wait' & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pids := func(ps []Proc) []int {
		var out []int
		for _, p := range ps {
			out = append(out, p.Pid)
		}
		sort.Ints(out)
		return out
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		walked, scanned := pids(Descendants(os.Getpid())), pids(descendantsByScan(os.Getpid()))
		// sh, sleep 60, sh, sleep 61 (and nothing else of this test's).
		if len(walked) >= 4 && len(walked) == len(scanned) {
			for i := range walked {
				if walked[i] != scanned[i] {
					t.Fatalf("walk %v, scan %v", walked, scanned)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("walk %v, scan %v: want the same four or more", walked, scanned)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
