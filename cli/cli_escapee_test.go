package cli

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/testwait"
)

// A process that leaves its group (a setsid child, a double-forking
// daemonizer) is still the group's work: ls lists it under the group,
// marked, and kill ends and names it.
func TestEscapeesAreListedEndedAndNamed(t *testing.T) {
	pgid := runDetached(t, "bash", "-c", "setsid sleep 3105 & ( ( setsid sleep 3107 & ) & ); sleep 3106")
	var esc []listProcess
	testwait.For(t, 20*time.Second, "both escapees to be listed", func() bool {
		g, ok := findGroup(listJSON(t), pgid)
		esc = g.Escapees
		seen := map[string]bool{}
		for _, e := range esc {
			seen[strings.Join(e.Argv, " ")] = true
		}
		return ok && len(esc) == 2 && seen["sleep 3105"] && seen["sleep 3107"]
	})
	pids := map[string]int{}
	for _, e := range esc {
		pids[strings.Join(e.Argv, " ")] = e.PID
	}
	if pids["sleep 3105"] == 0 || pids["sleep 3107"] == 0 {
		t.Fatalf("escapees %+v, want sleep 3105 and sleep 3107", esc)
	}
	for _, pid := range pids {
		if sid, _ := unix.Getsid(pid); sid != pid {
			t.Fatalf("escapee %d is in session %d, not its own", pid, sid)
		}
	}
	table := mustSandtop(t, "ls")
	for _, pid := range pids {
		if !strings.Contains(table, "└ "+strconv.Itoa(pid)) || !strings.Contains(table, "escapee") {
			t.Fatalf("ls does not show escapee %d under its group:\n%s", pid, table)
		}
	}

	out := mustSandtop(t, "kill", "--grace", "1s", strconv.Itoa(pgid))
	for argv, pid := range pids {
		if !strings.Contains(out, "ended escapee "+strconv.Itoa(pid)+" ("+argv+")") {
			t.Fatalf("kill does not name escapee %d (%s):\n%s", pid, argv, out)
		}
	}
	if !strings.Contains(out, "is empty") {
		t.Fatalf("kill: %s", out)
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil {
			if st := procState(pid); st != "Z" {
				t.Fatalf("escapee %d still runs after kill (state %q)", pid, st)
			}
		}
	}
}

// procState is the state letter of /proc/<pid>/stat, "" when gone.
func procState(pid int) string {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	b := string(raw)
	if i := strings.LastIndexByte(b, ')'); i >= 0 && i+2 < len(b) {
		return b[i+2 : i+3]
	}
	return ""
}
