package seam

import (
	"os"
	"slices"
	"testing"
	"time"
)

func TestParseProcessTableKeepsArgsWithBlanks(t *testing.T) {
	out := []byte("    1     0     1     1    -1 Ss        3600  0.0  1024 ?        /sbin/init splash\n" +
		"  420     1   420   420   420 S+          10 12.5  2048 pts/0    bash -c sleep 1 | sleep 2\n")
	now := time.Now()
	rows, err := parseProcessTable(out, now)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %+v, %v", rows, err)
	}
	r := rows[1]
	if r.Pid != 420 || r.Ppid != 1 || r.Tpgid != 420 || r.State != "S" || r.CPUPercent != 12.5 || r.RSSBytes != 2048*1024 ||
		r.TTY != "pts/0" || r.Comm != "bash" || !slices.Equal(r.Argv, []string{"bash", "-c", "sleep", "1", "|", "sleep", "2"}) ||
		!r.Started.Equal(now.Add(-10*time.Second)) {
		t.Fatalf("row %+v", r)
	}
	if rows[0].TTY != "" || rows[0].Tpgid != -1 {
		t.Fatalf("no terminal: %+v", rows[0])
	}
	if _, err := parseProcessTable([]byte("12 x\n"), now); err == nil {
		t.Fatal("a short row was accepted")
	}
}

// The table is stock envd's: one ps through the control plane; sandtop's
// daemon serves its own, grouped.
func TestProcessTableOnStockEnvdOnly(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		rows, _, err := s.rt.ProcessTable(s.ctx())
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
