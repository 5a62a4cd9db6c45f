package seam

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On stock envd, paths are removed by rm in the sandbox, and one argument
// of a command may not exceed 128 KiB: a prune of some 1,800 settled
// groups failed with "argument list too long". Thousands of long paths
// are removed in one call all the same.
func TestCompatRemovesThousandsOfPathsInOneCall(t *testing.T) {
	s := newSeam(t, true, nil)
	dir := t.TempDir()
	const n = 3000
	paths := make([]string, 0, n)
	for i := range n {
		p := filepath.Join(dir, strings.Repeat("x", 80)+"-"+itoa(i))
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	if err := s.rt.control.Remove(s.ctx(), paths...); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("%d of %d paths are still there", len(left), n)
	}
}
