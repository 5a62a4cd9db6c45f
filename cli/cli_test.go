package cli

import (
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

func TestRunWaitExitsWithTheChildsCode(t *testing.T) {
	t.Parallel()
	cases := []struct {
		script string
		code   int
		out    string
	}{
		{"echo hello; exit 0", 0, "hello\n"},
		{"echo failing; echo oops >&2; exit 3", 3, "failing\n"},
		{"kill -TERM $$", 128 + 15, ""},
	}
	for _, c := range cases {
		r := sandtop(t, "run", "--wait", "--", "bash", "-c", c.script)
		if r.code != c.code || r.stdout != c.out {
			t.Errorf("run --wait %q: exit %d stdout %q, want exit %d stdout %q (stderr %q)", c.script, r.code, r.stdout, c.code, c.out, r.stderr)
		}
	}
	r := sandtop(t, "run", "--wait", "--", "bash", "-c", "echo oops >&2; exit 1")
	if !strings.Contains(r.stderr, "oops") {
		t.Errorf("stderr of the child should reach sandtop's stderr: %q", r.stderr)
	}
}

func TestLsJSONListsAPipelineAsOneGroup(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "sleep 300 | sleep 301 | sleep 302")
	var g listGroup
	testwait.For(t, 15*time.Second, "the pipeline's three sleeps in its group", func() bool {
		var ok bool
		g, ok = findGroup(listJSON(t), pgid)
		return ok && len(sleepsIn(g)) == 3
	})
	if g.State != "running" || strings.Join(g.Command, " ") != "bash -c sleep 300 | sleep 301 | sleep 302" {
		t.Fatalf("group %d: state %q command %q", pgid, g.State, g.Command)
	}
	for _, other := range listJSON(t).Groups {
		if other.PGID != pgid && len(sleepsIn(other)) > 0 && strings.Contains(strings.Join(other.Command, " "), "sleep 301") {
			t.Fatalf("pipeline members leaked into group %d", other.PGID)
		}
	}
	mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
}

// sleepsIn returns the group's program processes that are sleeps.
func sleepsIn(g listGroup) []listProcess {
	var out []listProcess
	for _, m := range g.Members {
		if !m.Wrapper && len(m.Argv) > 0 && m.Argv[0] == "sleep" {
			out = append(out, m)
		}
	}
	return out
}

func TestKillWithGraceEmptiesATermIgnoringTree(t *testing.T) {
	t.Parallel()
	// The leader and a child both ignore SIGTERM: only SIGKILL empties it.
	pgid := runDetached(t, "bash", "-c", `trap "" TERM; (trap "" TERM; sleep 300) & sleep 300`)
	testwait.For(t, 15*time.Second, "both sleeps to run", func() bool {
		g, ok := findGroup(listJSON(t), pgid)
		return ok && len(sleepsIn(g)) == 2
	})
	start := time.Now()
	out := mustSandtop(t, "kill", "--grace", "700ms", itoa(pgid))
	for _, phase := range []string{"SIGTERM sent", "waiting up to 700ms", "SIGKILL sent", "is empty"} {
		if !strings.Contains(out, phase) {
			t.Fatalf("kill output lacks %q:\n%s", phase, out)
		}
	}
	if took := time.Since(start); took < 700*time.Millisecond {
		t.Fatalf("SIGKILL came before the grace was over (%s)", took)
	}
	g, ok := findGroup(listJSON(t), pgid)
	if !ok || g.State != "settled" || len(g.Members) != 0 {
		t.Fatalf("after kill the group should be settled and empty: %+v", g)
	}
	// The wrapper died with the group before publishing; ls still says
	// how the command ended and what it was.
	if g.Signal != "SIGKILL" || len(g.Command) != 3 || g.Command[0] != "bash" {
		t.Fatalf("a SIGKILLed group lists signal %q command %q", g.Signal, g.Command)
	}
}

func TestLsKeepsFinishedGroupsInOrderWithTheirCommand(t *testing.T) {
	t.Parallel()
	first := runDetached(t, "bash", "-c", "exit 7")
	testwait.For(t, 15*time.Second, "the first group to settle", func() bool {
		g, ok := findGroup(listJSON(t), first)
		return ok && g.State == "settled"
	})
	second := runDetached(t, "true")
	var doc listDoc
	testwait.For(t, 15*time.Second, "the second group to settle", func() bool {
		doc = listJSON(t)
		g, ok := findGroup(doc, second)
		return ok && g.State == "settled"
	})
	at := map[int]int{}
	for i, g := range doc.Groups {
		at[g.PGID] = i
	}
	if at[first] > at[second] {
		t.Fatalf("finished groups are not oldest first: %d listed after %d", first, second)
	}
	g1, _ := findGroup(doc, first)
	g2, _ := findGroup(doc, second)
	if strings.Join(g1.Command, " ") != "bash -c exit 7" || g1.ExitCode == nil || *g1.ExitCode != 7 {
		t.Fatalf("first group: command %q exit %v", g1.Command, g1.ExitCode)
	}
	if strings.Join(g2.Command, " ") != "true" {
		t.Fatalf("second group: command %q", g2.Command)
	}
}

func TestBadInputGivesOneLineErrorAndNonZeroExit(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		code int
		says string
	}{
		{[]string{"signal", "TERM", "4194303"}, exitError, "no process group 4194303"},
		{[]string{"kill", "4194303"}, exitError, "no live process group 4194303"},
		{[]string{"logs", "4194303"}, exitError, "no process group 4194303"},
		{[]string{"run", "--env", "=x", "--", "true"}, exitUsage, "empty name"},
		{[]string{"run", "--env", "A\x01B", "--", "true"}, exitUsage, `"A\x01B": want NAME=VALUE`},
		{[]string{"run", "--cwd", "/no/such/dir", "--", "true"}, exitError, "/no/such/dir"},
		{[]string{"run", "--", "no-such-program-xyz"}, exitError, "no-such-program-xyz"},
		{[]string{"run"}, exitUsage, "requires at least 1 arg"},
		{[]string{"signal", "BOGUS", "1234"}, exitUsage, `unknown signal "BOGUS"`},
		{[]string{"kill", "abc"}, exitUsage, `pgid "abc"`},
		{[]string{"kill", "1"}, exitUsage, "init"},
		{[]string{"attach", "4194303"}, exitError, "4194303"},
		{[]string{"ls", "-o", "yaml"}, exitUsage, `-o "yaml"`},
		{[]string{"frobnicate"}, exitUsage, `unknown command "frobnicate"`},
		{[]string{"ls", "--socket", "/a", "--envd", "http://b:1"}, exitUsage, "only one target"},
		{[]string{"ls", "--envd", "10.0.0.5:49983"}, exitError, "not an http"},
		{[]string{"ls", "--target", "nowhere"}, exitUsage, `no target "nowhere"`},
	}
	for _, c := range cases {
		r := sandtop(t, c.args...)
		msg := strings.TrimSuffix(r.stderr, "\n")
		if r.code != c.code || strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "sandtop: ") || !strings.Contains(msg, c.says) {
			t.Errorf("sandtop %q: exit %d, stderr %q; want exit %d and one line mentioning %q", c.args, r.code, r.stderr, c.code, c.says)
		}
	}
}

func TestHelpAndCompletionWork(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"run", "--help"}, {"kill", "--help"}, {"completion", "bash"}, {"version"}, {"config", "path"}} {
		if out := mustSandtop(t, args...); out == "" {
			t.Errorf("sandtop %v printed nothing", args)
		}
	}
}

func TestReadOnlyRefusesMutations(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--read-only", "run", "--", "true"}, {"--read-only", "kill", "12345"}, {"--read-only", "signal", "TERM", "12345"}} {
		r := sandtop(t, args...)
		if r.code != exitError || !strings.Contains(r.stderr, "read-only") {
			t.Errorf("sandtop %v: exit %d %q, want a read-only refusal", args, r.code, r.stderr)
		}
	}
	mustSandtop(t, "--read-only", "ls")
}

func itoa(n int) string { return strconv.Itoa(n) }

// runStoppedSleep starts sleep 300, SIGSTOPs its group once sleep runs, and
// waits until ls shows the group as stopped.
func runStoppedSleep(t *testing.T) int {
	t.Helper()
	pgid := runDetached(t, "sleep", "300")
	testwait.For(t, 15*time.Second, "sleep in its group", func() bool {
		g, ok := findGroup(listJSON(t), pgid)
		return ok && len(sleepsIn(g)) == 1
	})
	mustSandtop(t, "signal", "STOP", itoa(pgid))
	testwait.For(t, 10*time.Second, "the group to show as stopped", func() bool {
		g, ok := findGroup(listJSON(t), pgid)
		return ok && g.State == "stopped"
	})
	return pgid
}

func TestLsShowsAStoppedGroupAsStopped(t *testing.T) {
	t.Parallel()
	pgid := runStoppedSleep(t)
	defer mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
	mustSandtop(t, "signal", "CONT", itoa(pgid))
	testwait.For(t, 10*time.Second, "the group to run again", func() bool {
		g, ok := findGroup(listJSON(t), pgid)
		return ok && g.State == "running"
	})
}

// A stopped group cannot act on SIGTERM: kill ends it with SIGKILL after
// the grace, and ls says so.
func TestKillEndsAStoppedGroupWithSIGKILL(t *testing.T) {
	t.Parallel()
	pgid := runStoppedSleep(t)
	out := mustSandtop(t, "kill", "--grace", "500ms", itoa(pgid))
	if !strings.Contains(out, "SIGKILL sent") || !strings.Contains(out, "is empty") {
		t.Fatalf("a stopped group did not end with SIGKILL:\n%s", out)
	}
	if g, ok := findGroup(listJSON(t), pgid); !ok || g.State != "settled" || g.Signal != "SIGKILL" {
		t.Fatalf("the stopped group should have ended by SIGKILL: %+v", g)
	}
}

// sandtop signal used to signal any group above 1, sandbox or not; the
// daemon now refuses a group it does not list, and signal says so on one
// line naming the pgid, with exit 1.
func TestSignalRefusesAGroupOutsideTheSandbox(t *testing.T) {
	t.Parallel()
	foreign := exec.Command("sleep", "778")
	// Dies with the test binary, even when go test's timeout kills it.
	foreign.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setsid: true}
	if err := foreign.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = foreign.Process.Kill(); _ = foreign.Wait() })
	pgid := itoa(foreign.Process.Pid)
	r := sandtop(t, "signal", "TERM", pgid)
	if r.code != 1 || strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || !strings.Contains(r.stderr, pgid) || strings.Contains(r.stdout, "sent") {
		t.Fatalf("signal TERM %s: exit %d stdout %q stderr %q", pgid, r.code, r.stdout, r.stderr)
	}
	if err := foreign.Process.Signal(syscall.Signal(0)); err != nil {
		t.Fatalf("the foreign process was killed: %v", err)
	}
}
