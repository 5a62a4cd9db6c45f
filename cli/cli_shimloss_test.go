package cli

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// A group's shim can be hit: by its program (kill $PPID, which it now
// survives) or by an operator's kill -9 (which nothing survives). Either
// way the group stays the sandbox's: listed running with its command,
// before and after a daemon restart; prune keeps its state; kill ends it
// and proves it empty.
func TestGroupOutlivesHitsOnItsShim(t *testing.T) {
	for _, c := range []struct {
		name     string
		argv     []string
		killShim bool
	}{
		{"program-kills-ppid", []string{"bash", "-c", "for s in TERM INT HUP QUIT; do kill -$s $PPID; done; sleep 1000 | sleep 1001"}, false},
		{"operator-kill-9", []string{"bash", "-c", "sleep 1000 | sleep 1001"}, true},
	} {
		t.Run(c.name, func(t *testing.T) { testShimHit(t, c.argv, c.killShim) })
	}
}

func testShimHit(t *testing.T, argv []string, killShim bool) {
	s := newRestartSandbox(t)
	pgid := s.run("hit", argv...)
	t.Cleanup(func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) })
	shim := ppidOf(pgid)
	if shim <= 1 {
		t.Fatalf("group %d has no shim (parent %d)", pgid, shim)
	}
	if killShim {
		if err := syscall.Kill(shim, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
	}
	// The pipeline runs once the kills are done.
	var id string
	check := func(when string) {
		t.Helper()
		var g listGroup
		testwait.For(t, 20*time.Second, "the group's three members "+when, func() bool {
			var ok bool
			g, ok = findGroup(s.list(), pgid)
			return ok && len(g.Members) == 3
		})
		if g.State != "running" || !slices.Equal(g.Command, argv) || g.Tag != "hit" {
			t.Fatalf("%s: group %d is %s with command %q, tag %q; want running, %q, hit", when, pgid, g.State, g.Command, g.Tag, argv)
		}
		id = g.ID
	}
	check("before a restart")
	if !killShim {
		if st := procState(shim); st == "" || st == "Z" {
			t.Fatalf("the shim %d did not survive its program's kill $PPID", shim)
		}
	}

	daemon := s.daemonPid()
	if err := syscall.Kill(daemon, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the daemon to exit", func() bool { st := procState(daemon); return st == "" || st == "Z" })
	check("after a restart")

	s.must("prune", "--older-than", "0s")
	if s.stateFile(id, "pid") == "" {
		t.Fatalf("prune removed the state of live group %d", pgid)
	}
	out := s.must("kill", "--grace", "1s", strconv.Itoa(pgid))
	if !strings.Contains(out, fmt.Sprintf("group %d is empty", pgid)) {
		t.Fatalf("kill %d printed:\n%s", pgid, out)
	}
	g, ok := findGroup(s.list(), pgid)
	if ok && (g.State == "running" || len(g.Members) > 0) {
		t.Fatalf("after kill, group %d is %s with members %v", pgid, g.State, g.Members)
	}
	if ok && !slices.Equal(g.Command, argv) {
		t.Fatalf("after kill, group %d shows command %q, want %q from its argv file", pgid, g.Command, argv)
	}
}

// ppidOf is pid's parent, or 0.
func ppidOf(pid int) int {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	b := string(raw)
	i := strings.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(b[i+1:])
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}
