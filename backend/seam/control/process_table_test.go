package control

import (
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
