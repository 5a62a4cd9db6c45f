package ui

import (
	"strings"
	"testing"
	"time"

	"sandtop/groupstate"
	"sandtop/sandbox"
)

// hostileText is what a program in the sandbox could put in a tag or its
// argv: a window-title change (OSC 0 ended by BEL), a colour (CSI SGR), a
// clipboard write (OSC 52 ended by ST) and an 8-bit CSI.
const hostileText = "x\x1b]0;pwned\x07\x1b[31mred\x1b]52;c;aGk=\x1b\\\u009b1m"

// controlBytes counts the control characters in s that a terminal would
// act on. Tests render without colour, so a view must hold none.
func controlBytes(s string) int {
	n := 0
	for _, r := range s {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) {
			n++
		}
	}
	return n
}

// The tree and the terminals pane draw a group's tag, argv and
// command names, and a terminal's title, without a byte of the escape
// sequences they hold.
func TestSandboxStringsAreDrawnWithoutEscapes(t *testing.T) {
	m, src := newTestModel(t, 200, 50)
	snap := demoSnapshot(testNow)
	snap.Groups = append(snap.Groups,
		sandbox.Group{PGID: 4800, SID: 4800, LeaderPID: 4800, State: groupstate.Running, Origin: sandbox.OriginSandtop, Tag: hostileText, Started: testNow.Add(-time.Minute),
			Members: []sandbox.Process{{PID: 4800, PGID: 4800, SID: 4800, State: "S", Argv: []string{"sleep", hostileText}, Comm: hostileText}}},
		sandbox.Group{PGID: 4900, SID: 4900, LeaderPID: 4900, Origin: sandbox.OriginSandtop, Tag: hostileText, State: groupstate.Settled})
	snap.Terminals = append(snap.Terminals, sandbox.Terminal{PID: 4950, SID: 4950, ForegroundPGID: 4950, Rows: 24, Cols: 80, Title: hostileText, Argv: []string{hostileText}})
	m.Update(snapshotMsg{gen: 0, snap: snap, ch: src.snaps})
	view := viewOf(m)
	if !strings.Contains(view, "4800") || !strings.Contains(view, "]0;pwned") || !strings.Contains(view, "4950") {
		t.Fatalf("the hostile group and terminal are not drawn:\n%s", view)
	}
	if n := controlBytes(view); n > 0 {
		t.Fatalf("the view holds %d control characters:\n%q", n, view)
	}
	// Expanded, the group's member rows draw the argv too.
	for m.cur.tree.cursor < len(m.cur.tree.rows) && (m.cur.tree.rows[m.cur.tree.cursor].group == nil || m.cur.tree.rows[m.cur.tree.cursor].group.PGID != 4800) {
		before := m.cur.tree.cursor
		press(t, m, "down")
		if m.cur.tree.cursor == before {
			t.Fatal("cannot reach group 4800 in the tree")
		}
	}
	press(t, m, "right")
	press(t, m, "up") // the cursor row is restyled whole; look at the others
	view = viewOf(m)
	if !strings.Contains(view, "·4800") {
		t.Fatalf("group 4800 did not expand:\n%s", view)
	}
	if n := controlBytes(view); n > 0 {
		t.Fatalf("the expanded view holds %d control characters:\n%q", n, view)
	}
}
