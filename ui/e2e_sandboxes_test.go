package ui

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestEndToEndTwoSandboxes opens the real binary on two daemons
// (`sandtop --socket a.sock --socket b.sock`), starts a TERM-ignoring group
// in each, switches with :ctx, tears down B's group after confirming, and
// checks with `sandtop ls --socket a.sock -o json` that A's group is
// untouched and still running.
func TestEndToEndTwoSandboxes(t *testing.T) {
	e := newE2E(t)
	e.serve("a.sock")
	e.serve("b.sock")
	tm := e.tui("e2e2", "--socket", "a.sock", "--socket", "b.sock")
	tm.wait("A connected", "socket:a.sock (1/2")
	tm.wait("A's table", "● connected")

	tm.runStubborn(e.stubborn("a"))
	tm.keys("Escape")
	tm.waitFunc("the filter cleared", func(s string) bool { return !strings.Contains(s, "· filter ") })

	tm.keys(":")
	tm.text("ctx socket:b.sock")
	tm.keys("Enter")
	tm.wait("B on screen", "socket:b.sock (2/2")
	tm.wait("B's own (empty) table", "Groups 0")
	tm.teardownSelected(tm.runStubborn(e.stubborn("b")))
	tm.wait("the teardown logged under B", "socket:b.sock SIGKILL to pgid")

	tm.quit()
	if n := len(pidsByCmdline(e.stubborn("b") + "\x00")); n != 0 {
		t.Fatalf("B's torn-down group still has %d processes", n)
	}
	if !stubbornRunning(t, e.sandtop("ls", "--socket", "a.sock", "-o", "json"), e.stubborn("a")) {
		t.Fatalf("A's group is not running after B's teardown")
	}
	if len(pidsByCmdline(e.stubborn("a")+"\x00")) == 0 {
		t.Fatalf("A's process is gone")
	}
}

// stubbornRunning reads `ls -o json` for a running group with a member
// named comm.
func stubbornRunning(t *testing.T, doc, comm string) bool {
	t.Helper()
	var ls struct {
		Groups []struct {
			State   string `json:"state"`
			Members []struct {
				Argv []string `json:"argv"`
			} `json:"members"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(doc), &ls); err != nil {
		t.Fatalf("ls -o json: %v\n%s", err, doc)
	}
	for _, g := range ls.Groups {
		for _, m := range g.Members {
			if len(m.Argv) > 0 && m.Argv[0] == comm && g.State == "running" {
				return true
			}
		}
	}
	t.Logf("ls -o json:\n%s", doc)
	return false
}
