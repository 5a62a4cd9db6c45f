package seam

import (
	"os"
	"slices"
	"testing"
)

// The table is stock envd's: one ps through the control plane; sandtop's
// daemon serves its own, grouped.
func TestProcessTableOnStockEnvdOnly(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		rows, _, err := s.rt.processTable(s.ctx())
		if !s.compat {
			if err == nil {
				t.Fatal("the extension plane ran ps")
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rows, func(r ProcessRow) bool { return r.Pid == os.Getpid() && len(r.Argv) > 0 }) {
			t.Fatalf("our own process is not in the table of %d rows", len(rows))
		}
	})
}
