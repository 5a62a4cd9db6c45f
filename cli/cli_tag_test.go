package cli

import (
	"fmt"
	"strings"
	"testing"
)

// "run --tag" stores the tag in the sandbox: ls shows it, in the table and
// in JSON, while the group runs and after it settled.
func TestRunTagIsShownByLs(t *testing.T) {
	t.Parallel()
	const tag = "cli-tag-test: nightly"
	out := mustSandtop(t, "run", "--tag", tag, "--", "sleep", "300")
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	if g, ok := findGroup(listJSON(t), pgid); !ok || g.Tag != tag {
		t.Fatalf("ls -o json: %+v", g)
	}
	if table := mustSandtop(t, "ls"); !strings.Contains(table, tag) {
		t.Fatalf("ls table lacks the tag:\n%s", table)
	}
	mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
	for _, g := range listJSON(t).Groups {
		if g.PGID == pgid && g.Tag != tag {
			t.Fatalf("settled group lost its tag: %+v", g)
		}
	}
	if r := sandtop(t, "run", "--tag", "two\nlines", "--", "true"); r.code != exitUsage || !strings.Contains(r.stderr, "tag") {
		t.Fatalf("multi-line tag: exit %d, %q", r.code, r.stderr)
	}
}
