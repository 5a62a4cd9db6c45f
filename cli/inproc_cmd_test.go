package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/e2b"
	"sandtop/backend/target"
	"sandtop/testwait"
)

// The commands' run functions, in-process (see inproc_test.go).

// A group is started, found by ls in every format, stopped and continued
// by signal, torn down by kill, and then proven gone: settled in ls, no
// live process left in its group, and refused by signal and kill.
func TestInprocGroupLifecycle(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	pid, pgid := p.run(t, "inproc-life", "sleep", "300")
	if pid <= 1 || pgid != pid {
		t.Fatalf("run printed pid %d pgid %d: the program should lead its own group", pid, pgid)
	}
	g := p.waitState(t, pgid, "running")
	if g.Tag != "inproc-life" || strings.Join(g.Command, " ") != "sleep 300" || g.Origin != "sandtop" {
		t.Fatalf("ls lists the group as %+v", g)
	}
	if len(liveInGroup(pgid)) == 0 {
		t.Fatalf("ls says group %d runs, but no process of this machine is in it", pgid)
	}

	ctx := testCtx(t)
	p.reset()
	if err := runLs(ctx, p.f, lsOptions{output: "name"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains("\n"+p.out.String(), "\n"+strconv.Itoa(pgid)+"\n") {
		t.Fatalf("ls -o name lacks %d:\n%s", pgid, p.out)
	}
	p.reset()
	if err := runLs(ctx, p.f, lsOptions{output: "table", filter: listFilter{tag: "inproc-*"}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(p.out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "PGID") || !strings.HasPrefix(lines[1], strconv.Itoa(pgid)+" ") ||
		!strings.Contains(lines[1], "running") || !strings.Contains(lines[1], "inproc-life") || !strings.HasSuffix(lines[1], "sleep 300") {
		t.Fatalf("ls --tag inproc-* printed:\n%s", p.out)
	}
	p.reset()
	if err := runLs(ctx, p.f, lsOptions{output: "table", filter: listFilter{tag: "other"}, noHeaders: true}); err != nil || p.out.String() != "" {
		t.Fatalf("ls --tag other --no-headers printed %q, %v; want nothing", p.out, err)
	}

	p.reset()
	if err := runSignal(ctx, p.f, signalOptions{sig: syscall.SIGSTOP, refs: pgidRefs(pgid)}); err != nil {
		t.Fatal(err)
	}
	if got, want := p.out.String(), "sent SIGSTOP to process group "+strconv.Itoa(pgid)+"\n"; got != want {
		t.Fatalf("signal printed %q, want %q", got, want)
	}
	p.waitState(t, pgid, "stopped")
	if err := runSignal(ctx, p.f, signalOptions{sig: syscall.SIGCONT, refs: pgidRefs(pgid)}); err != nil {
		t.Fatal(err)
	}
	p.waitState(t, pgid, "running")

	p.reset()
	start := time.Now()
	if err := runKill(ctx, p.f, killOptions{refs: pgidRefs(pgid), grace: 2 * time.Second, graceSet: true}); err != nil {
		t.Fatalf("kill: %v\n%s", err, p.out)
	}
	out := p.out.String()
	for _, phase := range []string{"SIGTERM sent to group " + strconv.Itoa(pgid), "waiting up to 2s", "group " + strconv.Itoa(pgid) + " is empty"} {
		if !strings.Contains(out, phase) {
			t.Fatalf("kill output lacks %q:\n%s", phase, out)
		}
	}
	if strings.Contains(out, "SIGKILL") || time.Since(start) > 30*time.Second {
		t.Fatalf("sleep obeys SIGTERM, yet kill went on to SIGKILL or took %s:\n%s", time.Since(start), out)
	}
	if left := liveInGroup(pgid); len(left) > 0 {
		t.Fatalf("kill said group %d is empty, but %v live in it", pgid, left)
	}
	// The group's status is published once its supervisor has reaped the
	// leader, a moment after the group is empty.
	testwait.For(t, 20*time.Second, "ls to list the group as settled by SIGTERM", func() bool {
		g, _ = findGroup(p.list(t), pgid)
		return g.State == "settled" && g.Signal != ""
	})
	if g.Signal != "SIGTERM" || liveMembers(g) != 0 {
		t.Fatalf("after kill ls lists %+v; want settled by SIGTERM with no live member", g)
	}

	if err := runSignal(ctx, p.f, signalOptions{sig: syscall.SIGTERM, refs: pgidRefs(pgid)}); err == nil || !strings.Contains(err.Error(), "no process group "+strconv.Itoa(pgid)) {
		t.Fatalf("signal to a torn-down group: %v", err)
	}
	if err := runKill(ctx, p.f, killOptions{refs: pgidRefs(pgid), grace: time.Second, graceSet: true}); err == nil || !strings.Contains(err.Error(), "no live process group") {
		t.Fatalf("kill of a torn-down group: %v", err)
	}
}

// liveMembers counts the members that have not exited.
func liveMembers(g listGroup) int {
	n := 0
	for _, m := range g.Members {
		if m.State != "Z" && m.State != "X" {
			n++
		}
	}
	return n
}

// A group that ignores SIGTERM outlives the grace and ends by SIGKILL;
// kill with no --grace takes the config's grace.
func TestInprocKillUsesTheConfigGraceThenSIGKILL(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "grace = \"600ms\"\n")
	_, pgid := p.run(t, "", "bash", "-c", `trap "" TERM; sleep 300`)
	testwait.For(t, 20*time.Second, "the trap to be set and sleep to run", func() bool {
		g, ok := findGroup(p.list(t), pgid)
		return ok && len(sleepsIn(g)) == 1
	})
	p.reset()
	start := time.Now()
	if err := runKill(testCtx(t), p.f, killOptions{refs: pgidRefs(pgid), grace: time.Hour}); err != nil {
		t.Fatalf("kill: %v\n%s", err, p.out)
	}
	took, out := time.Since(start), p.out.String()
	if !strings.Contains(out, "waiting up to 600ms") || !strings.Contains(out, "SIGKILL sent to group") || !strings.Contains(out, "is empty") {
		t.Fatalf("kill without --grace should wait the config's 600ms, then SIGKILL:\n%s", out)
	}
	if took < 600*time.Millisecond {
		t.Fatalf("SIGKILL came %s after the start, before the grace was over", took)
	}
	if left := liveInGroup(pgid); len(left) > 0 {
		t.Fatalf("%v still live in group %d", left, pgid)
	}
	var g listGroup
	testwait.For(t, 20*time.Second, "ls to list the group as settled by a signal", func() bool {
		g, _ = findGroup(p.list(t), pgid)
		return g.State == "settled" && g.Signal != ""
	})
	if g.Signal != "SIGKILL" {
		t.Fatalf("a TERM-ignoring group should end by SIGKILL: %+v", g)
	}
}

// Unknown pgids and pids are errors that name them and exit 1; nothing is
// printed as if it had worked, and the groups that exist are acted on.
func TestInprocUnknownGroupIsAnError(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	const nope = 4194303
	ctx := testCtx(t)
	_, live := p.run(t, "", "sleep", "300")
	p.reset()
	err := runSignal(ctx, p.f, signalOptions{sig: syscall.SIGCONT, refs: pgidRefs(live, nope)})
	if err == nil || !strings.Contains(err.Error(), "no process group 4194303") || exitCodeOf(err) != exitError {
		t.Fatalf("signal to %d and %d: %v", live, nope, err)
	}
	if p.out.String() != "sent SIGCONT to process group "+strconv.Itoa(live)+"\n" {
		t.Fatalf("signal should report the group it reached, and only that: %q", p.out)
	}
	p.reset()
	err = runKill(ctx, p.f, killOptions{refs: pgidRefs(live, nope), grace: time.Second, graceSet: true})
	if err == nil || !strings.Contains(err.Error(), "no live process group 4194303") || exitCodeOf(err) != exitError {
		t.Fatalf("kill %d %d: %v", live, nope, err)
	}
	// As kubectl delete does: the live group is torn down all the same.
	if !strings.Contains(p.out.String(), "group "+strconv.Itoa(live)+" is empty") || len(liveInGroup(live)) != 0 {
		t.Fatalf("kill with an unknown pgid must still end the live one; printed %q", p.out)
	}
	if err := runLogs(ctx, p.f, logsOptions{pid: nope}); err == nil || !strings.Contains(err.Error(), "no process group 4194303") {
		t.Fatalf("logs %d: %v", nope, err)
	}
	if err := runAttach(ctx, p.f, attachOptions{pid: nope}); err == nil || !strings.Contains(err.Error(), "attach 4194303") {
		t.Fatalf("attach %d: %v", nope, err)
	}
}

// A read-only target (by the config, or by --read-only) refuses every
// command that changes it, before anything starts; looking still works.
func TestInprocReadOnlyRefusesChanges(t *testing.T) {
	t.Parallel()
	byConfig := newInproc(t, "read_only = true\n")
	byFlag := newInproc(t, "")
	byFlag.g.readOnly = true
	for name, p := range map[string]*inproc{"config": byConfig, "flag": byFlag} {
		ctx := testCtx(t)
		refusals := map[string]error{
			"run":    runRun(ctx, p.f, runOptions{argv: []string{"true"}}),
			"term":   runTerm(ctx, p.f, termOptions{argv: []string{"cat"}}),
			"signal": runSignal(ctx, p.f, signalOptions{sig: syscall.SIGTERM, refs: pgidRefs(12345)}),
			"kill":   runKill(ctx, p.f, killOptions{refs: pgidRefs(12345), grace: time.Second, graceSet: true}),
			"attach": runAttach(ctx, p.f, attachOptions{pid: 12345}),
			"prune":  runPrune(ctx, p.f, pruneOptions{}),
		}
		for cmd, err := range refusals {
			if err == nil || !strings.Contains(err.Error(), "read-only") || exitCodeOf(err) != exitError {
				t.Errorf("read-only by %s: %s gave %v, want a read-only refusal", name, cmd, err)
			}
		}
		if p.out.String() != "" {
			t.Errorf("read-only by %s: refusals printed %q", name, p.out)
		}
		doc := p.list(t)
		if len(doc.Groups) != 0 || len(doc.Terminals) != 0 {
			t.Errorf("read-only by %s: something started anyway: %+v", name, doc)
		}
		p.reset()
		if err := runPrune(ctx, p.f, pruneOptions{dryRun: true}); err != nil || p.out.String() != "would remove 0 finished group(s)\n" {
			t.Errorf("read-only by %s: prune --dry-run printed %q, %v", name, p.out, err)
		}
	}
}

// run --wait streams the program's output to the factory's streams and
// returns its outcome as the exit code.
func TestInprocRunWaitReturnsTheOutcome(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	cases := []struct {
		script         string
		code           int
		stdout, stderr string
	}{
		{"echo hello", 0, "hello\n", ""},
		{"echo out; echo err >&2; exit 3", 3, "out\n", "err\n"},
		{"kill -TERM $$", 128 + 15, "", ""},
	}
	for _, c := range cases {
		p.reset()
		err := runRun(testCtx(t), p.f, runOptions{argv: []string{"bash", "-c", c.script}, wait: true})
		code := exitOK
		if err != nil {
			code = exitCodeOf(err)
		}
		// stderr starts with sandtop's own line naming the pid.
		first, rest, _ := strings.Cut(p.errOut.String(), "\n")
		if code != c.code || p.out.String() != c.stdout || !strings.HasPrefix(first, "[sandtop] pid ") || rest != c.stderr {
			t.Errorf("run --wait %q: exit %d (%v) stdout %q stderr %q; want exit %d stdout %q stderr %q after the pid line",
				c.script, code, err, p.out, p.errOut, c.code, c.stdout, c.stderr)
		}
	}
}

// Mistakes in run's and term's input are errors before anything starts.
func TestInprocStartRefusesBadInput(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	ctx := testCtx(t)
	cases := []struct {
		name string
		err  error
		code int
		says string
	}{
		{"empty env name", runRun(ctx, p.f, runOptions{argv: []string{"true"}, env: []string{"=x"}}), exitUsage, "empty name"},
		{"env without =", runRun(ctx, p.f, runOptions{argv: []string{"true"}, env: []string{"NOEQUALS"}}), exitUsage, "want NAME=VALUE"},
		{"bad tag", runRun(ctx, p.f, runOptions{argv: []string{"true"}, tag: "a\nb"}), exitUsage, "--tag"},
		{"missing program", runRun(ctx, p.f, runOptions{argv: []string{"no-such-program-xyz"}}), exitError, "no-such-program-xyz"},
		{"missing cwd", runRun(ctx, p.f, runOptions{argv: []string{"true"}, cwd: "/no/such/dir"}), exitError, "/no/such/dir"},
		{"no argv", runRun(ctx, p.f, runOptions{}), exitUsage, "needs a program"},
		{"term missing program", runTerm(ctx, p.f, termOptions{argv: []string{"no-such-program-xyz"}}), exitError, "no-such-program-xyz"},
		{"term bad env", runTerm(ctx, p.f, termOptions{env: []string{"=x"}}), exitUsage, "empty name"},
	}
	for _, c := range cases {
		if c.err == nil || exitCodeOf(c.err) != c.code || !strings.Contains(c.err.Error(), c.says) {
			t.Errorf("%s: %v (exit %d); want exit %d mentioning %q", c.name, c.err, exitCodeOf(c.err), c.code, c.says)
		}
	}
	if doc := p.list(t); len(doc.Groups) != 0 || len(doc.Terminals) != 0 {
		t.Fatalf("a refused start started something: %+v", doc)
	}
}

// logs prints a finished group's stdout and stderr to the matching
// streams; -f on a live group streams until its leader exits.
func TestInprocLogs(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	ctx := testCtx(t)
	_, pgid := p.run(t, "", "bash", "-c", "echo hello; echo oops >&2")
	p.waitState(t, pgid, "settled")
	// The supervisor may still be writing the record when the group is
	// settled.
	testwait.For(t, 20*time.Second, "logs to print the kept record", func() bool {
		p.reset()
		if err := runLogs(ctx, p.f, logsOptions{pid: pgid}); err != nil {
			t.Fatal(err)
		}
		return p.out.String() == "hello\n" && p.errOut.String() == "oops\n"
	})
	p.reset()
	if err := runLogs(ctx, p.f, logsOptions{pid: pgid, follow: true}); err != nil {
		t.Fatal(err)
	}
	// The daemon still holds the finished leader's output, stderr merged
	// into stdout; once it forgets, the kept record prints each on its own.
	if all := p.out.String() + p.errOut.String(); !strings.Contains(all, "hello\n") || !strings.Contains(all, "oops\n") {
		t.Fatalf("logs -f of a finished group printed stdout %q stderr %q", p.out, p.errOut)
	}

	_, live := p.run(t, "", "bash", "-c", "echo one; sleep 1; echo two")
	p.reset()
	done := make(chan error, 1)
	go func() { done <- runLogs(ctx, p.f, logsOptions{pid: live, follow: true}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("logs -f did not return after the group ended")
	}
	if out := p.out.String(); !strings.Contains(out, "one\n") || !strings.Contains(out, "two\n") {
		t.Fatalf("logs -f printed %q; want both lines", out)
	}
}

// prune removes settled groups only, and --dry-run removes nothing.
func TestInprocPrune(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	ctx := testCtx(t)
	_, done := p.run(t, "", "bash", "-c", "exit 4")
	_, running := p.run(t, "", "sleep", "300")
	p.waitState(t, done, "settled")

	// One line per group, then the count. The command is what the seam
	// read back, which may be nothing ("-") when it could not.
	pruned := func(verb string) bool {
		lines := strings.Split(p.out.String(), "\n")
		return len(lines) == 3 && lines[2] == "" && lines[1] == verb+" 1 finished group(s)" &&
			(lines[0] == verb+" pgid "+strconv.Itoa(done)+"  bash -c exit 4" || lines[0] == verb+" pgid "+strconv.Itoa(done)+"  -")
	}
	// The listing says settled a moment before this runtime has collected
	// the group's exit and let go of its handle; prune leaves a group the
	// runtime still holds, so the dry run is asked until it offers it.
	testwait.NoError(t, 20*time.Second, func() error {
		p.reset()
		if err := runPrune(ctx, p.f, pruneOptions{dryRun: true}); err != nil {
			return err
		}
		if !pruned("would remove") {
			return fmt.Errorf("prune --dry-run printed %q", p.out)
		}
		return nil
	})
	if _, ok := findGroup(p.list(t), done); !ok {
		t.Fatal("prune --dry-run removed the group")
	}
	p.reset()
	if err := runPrune(ctx, p.f, pruneOptions{olderThan: time.Hour}); err != nil || p.out.String() != "removed 0 finished group(s)\n" {
		t.Fatalf("prune --older-than 1h of a fresh group printed %q, %v", p.out, err)
	}
	p.reset()
	if err := runPrune(ctx, p.f, pruneOptions{}); err != nil {
		t.Fatal(err)
	}
	if !pruned("removed") {
		t.Fatalf("prune printed %q", p.out)
	}
	doc := p.list(t)
	if _, ok := findGroup(doc, done); ok {
		t.Fatal("prune left the settled group listed")
	}
	if g, ok := findGroup(doc, running); !ok || g.State != "running" {
		t.Fatalf("prune touched the running group: %+v", g)
	}
	if err := runPrune(ctx, p.f, pruneOptions{olderThan: -time.Second}); err == nil || exitCodeOf(err) != exitUsage {
		t.Fatalf("prune --older-than -1s: %v", err)
	}
}

// term starts a terminal that ls lists; attach sends it input from the
// factory's stdin, shows its output, and ends when it exits or on the
// detach key, which leaves it running.
func TestInprocTermAndAttach(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	ctx := testCtx(t)
	termPid := func(argv ...string) int {
		t.Helper()
		p.reset()
		if err := runTerm(ctx, p.f, termOptions{argv: argv, tag: "inproc-term"}); err != nil {
			t.Fatal(err)
		}
		pid, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(p.out.String(), "terminal pid "), "\n"))
		if err != nil {
			t.Fatalf("term printed %q", p.out)
		}
		return pid
	}
	listed := func(pid int) (listTerminal, bool) {
		for _, term := range p.list(t).Terminals {
			if term.PID == pid {
				return term, true
			}
		}
		return listTerminal{}, false
	}

	echo := termPid("bash", "-c", "read line; echo got:$line")
	if term, ok := listed(echo); !ok || term.Tag != "inproc-term" || term.Rows != 24 || term.Cols != 80 {
		t.Fatalf("ls lists terminal %d as %+v (found %v); want tag inproc-term, 80x24 without a terminal here", echo, term, ok)
	}
	p.reset()
	p.input(t, "hi\n")
	if err := runAttach(ctx, p.f, attachOptions{pid: echo}); err != nil {
		t.Fatal(err)
	}
	out := p.out.String()
	if !strings.Contains(out, "attached to terminal "+strconv.Itoa(echo)) || !strings.Contains(out, "got:hi") || !strings.Contains(out, "terminal "+strconv.Itoa(echo)+" ended") {
		t.Fatalf("attach to a terminal that reads a line and exits printed:\n%q", out)
	}

	cat := termPid("cat")
	p.reset()
	p.input(t, "abc\n\x1d")
	if err := runAttach(ctx, p.f, attachOptions{pid: cat}); err != nil {
		t.Fatal(err)
	}
	// What cat echoes may come after the detach: only the ending is sure.
	if out := p.out.String(); !strings.HasSuffix(out, "[sandtop] detached; terminal "+strconv.Itoa(cat)+" keeps running (sandtop attach "+strconv.Itoa(cat)+")\r\n") {
		t.Fatalf("attach, type abc and detach printed:\n%q", out)
	}
	if _, ok := listed(cat); !ok {
		t.Fatal("detaching ended the terminal")
	}
}

// ls checks its flags before it resolves any target, and never dials a
// paused E2B sandbox: it says so and lists nothing.
func TestInprocLsFlagsAndPausedSandbox(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	errOut := &lockedBuffer{}
	out := &lockedBuffer{}
	f := &factory{Out: out, ErrOut: errOut, Now: func() time.Time { return now },
		Resolve: func(context.Context) (resolved, error) {
			return resolved{}, errors.New("resolved before checking flags")
		},
		Open: func(context.Context, resolved) (*connection, error) {
			t.Error("ls dialled a sandbox")
			return nil, errors.New("dialled")
		},
	}
	ctx := testCtx(t)
	for _, opts := range []lsOptions{{output: "yaml"}, {output: "json", filter: listFilter{state: "sleeping"}}, {output: "json", filter: listFilter{tag: "["}}} {
		if err := runLs(ctx, f, opts); err == nil || exitCodeOf(err) != exitUsage {
			t.Errorf("ls %+v: %v, want a usage error", opts, err)
		}
	}

	sb := e2b.Sandbox{ID: "sbx1", TemplateID: "base", State: "paused", EndAt: now.Add(time.Hour)}
	f.Resolve = func(context.Context) (resolved, error) {
		return resolved{Target: target.Target{Name: "e2b:sbx1", Kind: target.KindE2B, SandboxID: "sbx1", E2B: &sb}}, nil
	}
	if err := runLs(ctx, f, lsOptions{output: "json"}); err != nil {
		t.Fatal(err)
	}
	doc := decodeList(t, out.String())
	if doc.Target != "e2b:sbx1" || !doc.Taken.Equal(now) || len(doc.Groups) != 0 || doc.E2B == nil || doc.E2B.State != "paused" {
		t.Fatalf("ls of a paused sandbox: %+v", doc)
	}
	if want := "sandtop: e2b:sbx1 is paused; nothing runs in it until it is resumed (sandtop e2b resume sbx1)\n"; errOut.String() != want {
		t.Fatalf("ls of a paused sandbox said %q, want %q", errOut, want)
	}
}

// pgidRefs names groups of the command's own sandbox.
func pgidRefs(pgids ...int) []groupRef {
	refs := make([]groupRef, len(pgids))
	for i, p := range pgids {
		refs[i] = groupRef{pgid: p}
	}
	return refs
}
