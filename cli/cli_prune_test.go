package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
)

// prune removes every settled group of the sandbox, so it runs against a
// sandbox of its own rather than the one the other tests share.
func TestPruneRemovesOnlyFinishedGroups(t *testing.T) {
	t.Parallel()
	dir, err := os.MkdirTemp("", "stp-")
	if err != nil {
		t.Fatal(err)
	}
	env := append(append([]string{}, testEnv...),
		"SANDTOP_RUNTIME_DIR="+filepath.Join(dir, "run"), "SANDTOP_STATE_DIR="+filepath.Join(dir, "state"))
	own := func(args ...string) result { return sandtopEnv(t, env, args...) }
	must := func(args ...string) string {
		t.Helper()
		r := own(args...)
		if r.code != 0 {
			t.Fatalf("sandtop %s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r.stdout
	}
	t.Cleanup(func() {
		own("daemon", "stop", "--grace", "500ms")
		os.RemoveAll(dir)
	})
	pgidOf := func(out string) int {
		var pid, pgid int
		if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
			t.Fatalf("run printed %q: %v", out, err)
		}
		return pgid
	}
	finished := pgidOf(must("run", "--", "bash", "-c", "echo kept-until-pruned"))
	running := pgidOf(must("run", "--", "sleep", "300"))
	states := func() map[int]string {
		doc := decodeList(t, must("ls", "-o", "json"))
		m := map[int]string{}
		for _, g := range doc.Groups {
			m[g.PGID] = g.State
		}
		return m
	}
	testwait.For(t, 15*time.Second, "one settled and one running group", func() bool {
		s := states()
		return s[finished] == "settled" && s[running] == "running"
	})

	if out := must("prune", "--older-than", "1h"); !strings.Contains(out, "removed 0 finished") {
		t.Fatalf("prune --older-than 1h removed a group seconds old:\n%s", out)
	}
	if out := must("prune", "--dry-run"); !strings.Contains(out, fmt.Sprintf("would remove pgid %d  bash -c echo kept-until-pruned", finished)) {
		t.Fatalf("dry run does not name the finished group:\n%s", out)
	}
	if r := own("--read-only", "prune"); r.code == 0 {
		t.Fatal("prune ran on a read-only target")
	}
	if s := states(); s[finished] != "settled" {
		t.Fatalf("dry run or refused prune removed the group: %v", s)
	}
	if out := must("prune"); !strings.Contains(out, "removed 1 finished") {
		t.Fatalf("prune:\n%s", out)
	}
	s := states()
	if _, ok := s[finished]; ok || s[running] != "running" {
		t.Fatalf("after prune: %v, want only the running group %d", s, running)
	}
	if r := own("logs", fmt.Sprint(finished)); r.code == 0 {
		t.Fatal("logs of a pruned group still succeeded")
	}
}
