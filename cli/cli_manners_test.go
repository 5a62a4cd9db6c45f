package cli

import (
	"bufio"
	"context"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// kill, as kubectl delete does, ends every live group it is given and
// names each one that is not live, exiting 1 once it has acted on the rest.
func TestKillEndsTheLiveGroupsAndNamesTheFinishedOne(t *testing.T) {
	t.Parallel()
	a := runDetached(t, "true")
	b := runDetached(t, "sleep", "300")
	testwait.For(t, 10*time.Second, "the first group to finish", func() bool {
		g, ok := findGroup(listJSON(t), a)
		return ok && g.State == "settled"
	})
	r := sandtop(t, "kill", "--grace", "1s", itoa(a), itoa(b))
	if r.code != exitError || !strings.Contains(r.stderr, "no live process group "+itoa(a)) || strings.Contains(r.stderr, "group "+itoa(b)) {
		t.Fatalf("kill A(finished) B(running): exit %d, stderr %q; want 1 naming only %d", r.code, r.stderr, a)
	}
	if !strings.Contains(r.stdout, "group "+itoa(b)+" is empty") {
		t.Fatalf("kill did not end the running group:\n%s", r.stdout)
	}
	if g, ok := findGroup(listJSON(t), b); ok && g.State != "settled" {
		t.Fatalf("after kill the running group is %s", g.State)
	}
	// signal likewise: the live group gets it, the missing one is named.
	c := runDetached(t, "sleep", "300")
	defer sandtop(t, "kill", "--grace", "1s", itoa(c))
	r = sandtop(t, "signal", "STOP", itoa(a), itoa(c))
	if r.code != exitError || !strings.Contains(r.stderr, itoa(a)) || !strings.Contains(r.stdout, "SIGSTOP to process group "+itoa(c)) {
		t.Fatalf("signal STOP A(finished) C(running): exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	testwait.For(t, 10*time.Second, "the live group stopped", func() bool {
		g, ok := findGroup(listJSON(t), c)
		return ok && g.State == "stopped"
	})
}

// kill $(sandtop ls -o name --tag none) is kill with no pgid: nothing to
// do is no failure.
func TestKillAndSignalOfNoGroupDoNothing(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"kill"}, {"kill", "--grace", "1s"}, {"signal", "TERM"}} {
		r := sandtop(t, args...)
		if r.code != exitOK || r.stdout != "" || !strings.Contains(r.stderr, "no process group named") {
			t.Errorf("sandtop %v: exit %d, stdout %q, stderr %q; want 0 and a note on stderr", args, r.code, r.stdout, r.stderr)
		}
	}
}

// A word that is none of a family's commands is a usage error, not its
// help and success.
func TestUnknownSubcommandIsAUsageError(t *testing.T) {
	t.Parallel()
	for _, family := range []string{"daemon", "config", "e2b", "completion"} {
		r := sandtop(t, family, "foo")
		if r.code != exitUsage || !strings.Contains(r.stderr, `unknown command "foo"`) {
			t.Errorf("sandtop %s foo: exit %d, stderr %q; want 2", family, r.code, r.stderr)
		}
		if r := sandtop(t, family); r.code != exitOK || !strings.Contains(r.stdout, "Usage:") {
			t.Errorf("sandtop %s alone: exit %d, want its help", family, r.code)
		}
	}
	if r := sandtop(t, "daemon", "stat"); r.code != exitUsage || !strings.Contains(r.stderr, "did you mean status") {
		t.Errorf("sandtop daemon stat: exit %d, stderr %q", r.code, r.stderr)
	}
}

// ls -o name is what kill can act on: live groups, unless --all.
func TestLsNameListsLiveGroupsUnlessAll(t *testing.T) {
	t.Parallel()
	done := runDetached(t, "true")
	live := runDetached(t, "sleep", "300")
	defer sandtop(t, "kill", "--grace", "1s", itoa(live))
	testwait.For(t, 10*time.Second, "the first group to finish", func() bool {
		g, ok := findGroup(listJSON(t), done)
		return ok && g.State == "settled"
	})
	names := strings.Fields(mustSandtop(t, "ls", "-o", "name"))
	if !slices.Contains(names, itoa(live)) || slices.Contains(names, itoa(done)) {
		t.Fatalf("ls -o name = %v; want %d and not the finished %d", names, live, done)
	}
	all := strings.Fields(mustSandtop(t, "ls", "-o", "name", "--all"))
	if !slices.Contains(all, itoa(live)) || !slices.Contains(all, itoa(done)) {
		t.Fatalf("ls -o name --all = %v; want both %d and %d", all, live, done)
	}
	settled := strings.Fields(mustSandtop(t, "ls", "-o", "name", "--state", "settled"))
	if !slices.Contains(settled, itoa(done)) {
		t.Fatalf("ls -o name --state settled = %v; want %d", settled, done)
	}
}

// ls -w prints the listing, then a row when a group appears and when it
// changes state, and ends cleanly on SIGTERM.
func TestLsWatchPrintsARowPerChangeAndEndsOnSIGTERM(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sandtopBin, "ls", "-w")
	cmd.Env = testEnv
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	waitLine := func(what string, match func(string) bool) {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("ls -w ended before %s", what)
				}
				if match(l) {
					return
				}
			case <-deadline:
				t.Fatalf("ls -w printed no %s", what)
			}
		}
	}
	waitLine("header", func(l string) bool { return strings.HasPrefix(l, "PGID ") })
	pgid := runDetached(t, "sleep", "300")
	row := func(state string) func(string) bool {
		return func(l string) bool {
			f := strings.Fields(l)
			return len(f) > 2 && f[0] == itoa(pgid) && f[1] == state
		}
	}
	waitLine("row for the new group", row("running"))
	mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
	waitLine("row for the group settling", row("settled"))
	_ = cmd.Process.Signal(syscall.SIGTERM)
	for range lines {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("ls -w after SIGTERM: %v", err)
	}
}
