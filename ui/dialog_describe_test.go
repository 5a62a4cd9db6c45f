package ui

import (
	"strings"
	"testing"
	"time"
)

// d shows a group's full facts, its whole command included, however
// narrow the screen.
func TestDescribeShowsTheWholeGroup(t *testing.T) {
	t.Parallel() // its model and source are its own
	for _, size := range [][2]int{{80, 24}, {160, 45}} {
		m, _ := newTestModel(t, size[0], size[1])
		long := []string{"python3", "-m", "pytest", "--maxfail=1", "tests/integration/test_the_very_long_module_name.py", "-k", "not slow and not flaky", "--junitxml=/tmp/report-end.xml"}
		for i := range m.cur.tree.groups {
			if m.cur.tree.groups[i].PGID == 4500 {
				m.cur.tree.groups[i].Argv = long
			}
		}
		m.cur.tree.rebuild()
		for range 12 {
			if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4500 {
				break
			}
			press(t, m, "down")
		}
		press(t, m, "d")
		if _, ok := m.dialog.(*describeDialog); !ok {
			t.Fatalf("%dx%d: d opened %T", size[0], size[1], m.dialog)
		}
		// Scroll through it all; every fact must appear on some frame.
		var seen strings.Builder
		for range 30 {
			seen.WriteString(viewOf(m))
			press(t, m, "down")
		}
		text := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(seen.String())), " ")
		for _, want := range []string{
			"report-end.xml", "not slow and not flaky", // the end of the command, not cut
			"state dir /run/sandtop/groups/7a1e", "supervised by the shim", "exit the command exited with code 2",
			"started 2025-06-01 11:55:00 UTC (5m ago)", "Members (0)",
		} {
			if !strings.Contains(text, want) {
				t.Errorf("%dx%d: describe lacks %q:\n%s", size[0], size[1], want, viewOf(m))
			}
		}
		press(t, m, "esc")
		if m.dialog != nil {
			t.Fatalf("esc did not close describe")
		}
	}
}

// An agent's group: its working directory is the parent of .dsh-e2b, and
// its members are listed.
func TestDescribeAnAgentsGroup(t *testing.T) {
	m, _ := newTestModel(t, 160, 45)
	press(t, m, "j", "j", "j", "j", "d")
	v := viewOf(m)
	for _, want := range []string{"Group 4200", "cwd        /home/user", "tag        dsh:agent-7", "python3 -m http.server 8080", "4200    1       S sleeping", "still running"} {
		if !strings.Contains(v, want) {
			t.Errorf("describe lacks %q:\n%s", want, v)
		}
	}
}

// What only the state directory tells (the working directory the
// supervisor published, when the group started and ended) is read once
// when describe opens, from a Source that can (GroupDescriber).
func TestDescribeReadsTheStateDirectorysDetails(t *testing.T) {
	t.Parallel() // its model and source are its own
	m, src := newTestModel(t, 160, 45)
	src.details = map[string]GroupDetails{"/run/sandtop/groups/7a1e": {
		Cwd: "/srv/checkout", Started: testNow.Add(-5 * time.Minute), Ended: testNow.Add(-90 * time.Second),
	}}
	for range 12 {
		if g := m.cur.tree.selectedGroup(); g != nil && g.PGID == 4500 {
			break
		}
		press(t, m, "down")
	}
	press(t, m, "d")
	var seen strings.Builder
	for range 30 {
		seen.WriteString(viewOf(m))
		press(t, m, "down")
	}
	text := strings.Join(strings.Fields(strings.NewReplacer("│", " ").Replace(seen.String())), " ")
	for _, want := range []string{"cwd /srv/checkout", "ended 2025-06-01 11:58:30 UTC (1m ago)"} {
		if !strings.Contains(text, want) {
			t.Errorf("describe lacks %q:\n%s", want, viewOf(m))
		}
	}
}
