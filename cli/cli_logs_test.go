package cli

import (
	"strings"
	"testing"
	"time"
)

// logs -f joins a running group late: it must show what was written before
// it attached (the daemon's replay), then the rest live, and end with the
// group. Afterwards plain logs prints the kept record.
func TestLogsFollowReplaysThenStreamsUntilTheGroupEnds(t *testing.T) {
	t.Parallel()
	pgid := runDetached(t, "bash", "-c", "for i in $(seq 10); do echo line-$i; sleep 0.3; done; echo err-done >&2")
	eventually(t, 15*time.Second, "the first line in the kept output", func() bool {
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
	eventually(t, 15*time.Second, "the whole record in plain logs", func() bool {
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
	eventually(t, 10*time.Second, "the running program's output in plain logs", func() bool {
		r := sandtop(t, "logs", itoa(pgid))
		return r.stdout == "first-line\n" && r.stderr == "first-err\n"
	})
}
