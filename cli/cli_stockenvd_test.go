package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/seam"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// The CLI on stock envd's surface (sandtop serve --compat envd stands in
// for E2B's envd): run uploads sandtop once and runs each group under it,
// and run --wait, logs, ls and kill read those groups as they read the
// wrapper's.
func TestCLIRunsStockEnvdGroupsUnderTheSupervisor(t *testing.T) {
	url := startCompatServe(t)
	root := t.TempDir()
	with := func(args ...string) []string {
		return append([]string{args[0], "--envd", url, "--runtime-root", root}, args[1:]...)
	}

	r := sandtop(t, with("run", "--wait", "--", "bash", "-c", "echo hi; echo oops >&2; exit 3")...)
	if r.code != 3 || r.stdout != "hi\n" || !strings.Contains(r.stderr, "oops") || strings.Contains(r.stderr, "bash wrapper") {
		t.Errorf("run --wait: exit %d stdout %q stderr %q; want 3, hi, oops", r.code, r.stdout, r.stderr)
	}
	out := mustSandtop(t, with("run", "--tag", "sup", "--", "bash", "-c", "echo started; exec sleep 300")...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	t.Cleanup(func() { sandtop(t, with("kill", "--grace", "1s", strconv.Itoa(pgid))...) })

	// One binary in the runtime root, named by sandtop's hash; the second
	// run reused it.
	id, err := seam.SupervisorID(sandtopBin)
	if err != nil {
		t.Fatal(err)
	}
	bins, _ := filepath.Glob(filepath.Join(root, wrapper.SupervisorDir, "*"))
	if want := wrapper.SupervisorBinary(root, id); len(bins) != 1 || bins[0] != want {
		t.Errorf("supervisor binaries %q, want only %s", bins, want)
	}

	var g listGroup
	testwait.For(t, 15*time.Second, "the group running in ls -o json", func() bool {
		var ok bool
		g, ok = findGroup(decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)), pgid)
		return ok && g.State == "running"
	})
	if g.Supervisor != "supervisor" || g.Tag != "sup" || strings.Join(g.Command, " ") != "bash -c echo started; exec sleep 300" || len(g.Members) != 1 {
		t.Errorf("listed as %+v", g)
	}
	// The group and its supervisor: two processes, the supervisor the
	// leader's parent.
	st, err := os.ReadFile("/proc/" + strconv.Itoa(pgid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	ppid := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))[1]
	sup, _ := os.ReadFile("/proc/" + ppid + "/cmdline")
	if !strings.Contains(string(sup), wrapper.SuperviseSubcommand) {
		t.Errorf("the leader's parent runs %q, not the supervisor", sup)
	}
	if table := mustSandtop(t, with("ls")...); strings.Contains(table, "bash wrapper") {
		t.Errorf("ls notes the wrapper:\n%s", table)
	}

	testwait.For(t, 10*time.Second, "logs to show the output", func() bool {
		return strings.Contains(mustSandtop(t, with("logs", strconv.Itoa(pgid))...), "started")
	})

	mustSandtop(t, with("kill", "--grace", "2s", strconv.Itoa(pgid))...)
	if g, _ := findGroup(decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)), pgid); g.State != "settled" || g.Signal != "SIGTERM" {
		t.Errorf("after kill the group is %q (%q), want settled by SIGTERM", g.State, g.Signal)
	}
}
