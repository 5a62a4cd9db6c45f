package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"sandtop/testwait"
)

// describe shows one group in full: the whole argv, its working directory,
// tag, origin, state directory, start, members with their states, and
// once it ended, how.
func TestDescribeShowsAGroupInFull(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := "echo " + strings.Repeat("x", 150) + "; sleep 300 | cat"
	var pgid int
	out := mustSandtop(t, "run", "--tag", "describe-me", "--cwd", dir, "--", "bash", "-c", long)
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", new(int), &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	var doc describeDoc
	testwait.For(t, 15*time.Second, "all three members", func() bool {
		doc = describeDoc{}
		r := sandtop(t, "describe", "-o", "json", itoa(pgid))
		if r.code != 0 {
			t.Logf("describe right after run: exit %d %s", r.code, r.stderr)
			return false
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatal(err)
		}
		return len(doc.Group.Members) == 3
	})
	g := doc.Group
	if strings.Join(g.Command, "\x00") != "bash\x00-c\x00"+long || g.Cwd != dir || g.Tag != "describe-me" ||
		g.Origin != "sandtop" || g.State != "running" || g.Started == nil || g.PGID != pgid {
		t.Fatalf("describe -o json: %+v", g)
	}
	if fi, err := os.Stat(g.StateDir); err != nil || !fi.IsDir() {
		t.Fatalf("state dir %q: %v", g.StateDir, err)
	}
	text := mustSandtop(t, "describe", itoa(pgid))
	for label, want := range map[string]string{"PGID": itoa(pgid), "Tag": "describe-me", "Cwd": dir, "State dir": g.StateDir,
		"Origin": "sandtop", "State": "running", "Exit": "- (still running)"} {
		if got := describeField(text, label); got != want {
			t.Fatalf("describe's %s is %q, want %q:\n%s", label, got, want, text)
		}
	}
	for _, want := range []string{"[2] " + `"` + long + `"`, "S (sleeping)", "sleep 300"} {
		if !strings.Contains(text, want) {
			t.Fatalf("describe is missing %q:\n%s", want, text)
		}
	}
	mustSandtop(t, "kill", "--grace", "1s", itoa(pgid))
	testwait.For(t, 15*time.Second, "the exit facts", func() bool {
		text = mustSandtop(t, "describe", itoa(pgid))
		return describeField(text, "Exit") == "killed by SIGTERM"
	})
	if describeField(text, "State") != "settled" || !strings.Contains(text, "Members: none live") || describeField(text, "Ended") == "" {
		t.Fatalf("describe of the ended group:\n%s", text)
	}
	if r := sandtop(t, "describe", "4194303"); r.code != exitError || !strings.Contains(r.stderr, "no process group 4194303") {
		t.Fatalf("describe of no group: exit %d %q", r.code, r.stderr)
	}
	if r := sandtop(t, "describe", "-o", "yaml", itoa(pgid)); r.code != exitUsage {
		t.Fatalf("describe -o yaml: exit %d %q", r.code, r.stderr)
	}
}

// describeField is the value on describe's line labelled label.
func describeField(text, label string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(line, label+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
