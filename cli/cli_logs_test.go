package cli

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// logs -f joins a running group late: it must show what was written before
// it attached (the daemon's replay), then the rest live, and end with the
// group. Afterwards plain logs prints the kept record.
func TestLogsFollowReplaysThenStreamsUntilTheGroupEnds(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "for i in $(seq 10); do echo line-$i; sleep 0.3; done; echo err-done >&2")
	testwait.For(t, 15*time.Second, "the first line in the kept output", func() bool {
		return strings.Contains(sandtop(t, "logs", itoa(pgid)).stdout, "line-1")
	})
	r := sandtop(t, "logs", "-f", itoa(pgid))
	if r.code != 0 {
		t.Fatalf("logs -f exited %d: %s", r.code, r.stderr)
	}
	for i := 1; i <= 10; i++ {
		if want := "line-" + itoa(i) + "\n"; !strings.Contains(r.stdout, want) {
			t.Fatalf("logs -f is missing %q:\n%s", want, r.stdout)
		}
	}
	// Live, stderr is merged into stdout; if the group ended before logs -f
	// attached, the kept record prints it on stderr instead.
	if !strings.Contains(r.stdout+r.stderr, "err-done") {
		t.Fatalf("logs -f lost stderr:\n%s\n%s", r.stdout, r.stderr)
	}
	testwait.For(t, 15*time.Second, "the whole record in plain logs", func() bool {
		r := sandtop(t, "logs", itoa(pgid))
		return strings.Contains(r.stdout, "line-10") && strings.Contains(r.stderr, "err-done")
	})
}

// A long-running program's first lines are in plain logs at once, not when
// it exits.
func TestLogsShowsARunningProgramsOutput(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "echo first-line; echo first-err >&2; exec sleep 300")
	defer mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
	testwait.For(t, 10*time.Second, "the running program's output in plain logs", func() bool {
		r := sandtop(t, "logs", itoa(pgid))
		return r.stdout == "first-line\n" && r.stderr == "first-err\n"
	})
}

// A group whose output files were removed (by hand; prune removes the
// whole directory) says so and fails, rather than printing nothing.
func TestLogsOfOutputWhoseFilesAreGoneFails(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "echo kept-line")
	testwait.For(t, 15*time.Second, "the output kept", func() bool {
		return sandtop(t, "logs", itoa(pgid)).stdout == "kept-line\n"
	})
	var id string
	for _, g := range listJSON(t).Groups {
		if g.PGID == pgid {
			id = g.ID
		}
	}
	if id == "" {
		t.Fatalf("group %d is not listed", pgid)
	}
	// The CLI tests' daemon keeps its runtime root in its state directory.
	dir := filepath.Join(filepath.Dir(sandtopBin), "state", "runtime", "processes", id)
	for _, name := range []string{"stdout.log", "stderr.log"} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	r := sandtop(t, "logs", itoa(pgid))
	if r.code == 0 || r.stdout != "" || !strings.Contains(r.stderr, "kept output is gone") || !strings.Contains(r.stderr, itoa(pgid)) {
		t.Fatalf("logs of removed output: exit %d, stdout %q, stderr %q; want a failure saying the output is gone", r.code, r.stdout, r.stderr)
	}
}

// sandtopMerged runs sandtop with its stdout and stderr on one pipe, as
// "2>&1" does, so the order of what it printed on each is kept.
func sandtopMerged(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sandtopBin, args...)
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = testEnv
	var both bytes.Buffer
	cmd.Stdout, cmd.Stderr = &both, &both
	if err := cmd.Run(); err != nil {
		t.Fatalf("sandtop %v: %v\n%s", args, err, both.String())
	}
	return both.String()
}

// A program that writes to stdout, then stderr, then stdout is shown in
// that order, by logs and by logs -f (which joins while it runs), with
// each stream on its own: stdout on stdout, stderr on stderr.
func TestLogsShowsStdoutAndStderrInArrivalOrder(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "sleep 0.5; echo out1; sleep 0.1; echo err1 >&2; sleep 0.1; echo out2; sleep 0.5")
	if got := sandtopMerged(t, "logs", "-f", itoa(pgid)); got != "out1\nerr1\nout2\n" {
		t.Fatalf("logs -f printed %q, want out1 err1 out2 in that order", got)
	}
	if got := sandtopMerged(t, "logs", itoa(pgid)); got != "out1\nerr1\nout2\n" {
		t.Fatalf("logs printed %q, want out1 err1 out2 in that order", got)
	}
	r := sandtop(t, "logs", itoa(pgid))
	if r.stdout != "out1\nout2\n" || r.stderr != "err1\n" {
		t.Fatalf("logs: stdout %q stderr %q; each stream belongs on its own", r.stdout, r.stderr)
	}
}

// --tail N prints the last N lines (of both streams, in arrival order);
// --timestamps starts each with its arrival time; --since keeps the recent
// ones.
func TestLogsTailTimestampsAndSince(t *testing.T) {
	t.Parallel()
	before := time.Now()
	pgid := runDetached(t, "bash", "-c", "for i in $(seq 1 20); do echo line-$i; done; sleep 0.1; echo late >&2; sleep 1.5; echo last")
	testwait.For(t, 15*time.Second, "the whole output kept", func() bool {
		return strings.Contains(sandtop(t, "logs", itoa(pgid)).stdout, "last")
	})
	after := time.Now()
	if got := sandtopMerged(t, "logs", "--tail", "5", itoa(pgid)); got != "line-18\nline-19\nline-20\nlate\nlast\n" {
		t.Fatalf("logs --tail 5 printed %q", got)
	}
	if got := sandtopMerged(t, "logs", "-n", "0", itoa(pgid)); got != "" {
		t.Fatalf("logs -n 0 printed %q", got)
	}
	out := sandtopMerged(t, "logs", "--timestamps", itoa(pgid))
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 22 {
		t.Fatalf("logs --timestamps printed %d lines:\n%s", len(lines), out)
	}
	var prev time.Time
	for i, l := range lines {
		stamp, text, ok := strings.Cut(l, " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if !ok || err != nil || !strings.HasSuffix(stamp, "Z") {
			t.Fatalf("line %d %q does not start with an RFC 3339 UTC time: %v", i, l, err)
		}
		if at.Before(before.Add(-time.Second)) || at.After(after) || at.Before(prev) {
			t.Fatalf("line %d %q: time %v is not an arrival time between %v and %v, in order", i, l, at, before, after)
		}
		prev = at
		if i == 21 && text != "last" {
			t.Fatalf("last line %q", l)
		}
	}
	// The last line came 1.5 s after the others: --since 1s is it alone,
	// counted from when the last line came.
	since := time.Since(prev) + time.Second
	if got := sandtopMerged(t, "logs", "--since", since.String(), itoa(pgid)); got != "last\n" {
		t.Fatalf("logs --since %s printed %q, want only the last line", since, got)
	}
	if r := sandtop(t, "logs", "--since", "yesterday", itoa(pgid)); r.code != exitUsage {
		t.Fatalf("logs --since yesterday: exit %d %q", r.code, r.stderr)
	}
}

// logs -f --tail 2 of a running group prints its last two lines so far,
// then each new one as it comes.
func TestLogsFollowWithTailStartsAtTheLastLines(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "for i in 1 2 3 4 5; do echo early-$i; done; sleep 2; echo later")
	testwait.For(t, 15*time.Second, "the early lines kept", func() bool {
		return strings.Contains(sandtop(t, "logs", itoa(pgid)).stdout, "early-5")
	})
	if got := sandtopMerged(t, "logs", "-f", "--tail", "2", itoa(pgid)); got != "early-4\nearly-5\nlater\n" {
		t.Fatalf("logs -f --tail 2 printed %q", got)
	}
}
