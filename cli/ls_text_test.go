package cli

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// hostileTag is what a program could put in a tag: a window-title change
// (OSC 0 ended by BEL), a colour (CSI SGR), a clipboard write (OSC 52
// ended by ST) and an 8-bit CSI.
const hostileTag = "t\x1b]0;pwned\x07\x1b[31mred\x1b]52;c;aGk=\x1b\\\u009b1m"

// terminalControls counts the bytes of s a terminal would act on: C0
// controls other than newline, DEL, and C1 controls (raw or UTF-8).
func terminalControls(s string) int {
	n := 0
	for _, r := range s {
		if (r < 0x20 && r != '\n') || (r >= 0x7f && r <= 0x9f) {
			n++
		}
	}
	return n
}

// A group whose tag and argv hold escape sequences: ls's table and wide
// table print them with every control byte replaced, and JSON keeps the
// exact strings, escaped.
func TestInprocLsPrintsSandboxStringsWithoutEscapes(t *testing.T) {
	t.Parallel()
	p := newInproc(t, "")
	ctx := testCtx(t)
	_, pgid := p.run(t, hostileTag, "bash", "-c", "exit 3", hostileTag)
	p.waitState(t, pgid, "settled")
	for _, format := range []string{"table", "wide"} {
		p.reset()
		if err := runLs(ctx, p.f, lsOptions{output: format}); err != nil {
			t.Fatal(err)
		}
		out := p.out.String()
		if !strings.Contains(out, itoa(pgid)) || !strings.Contains(out, "]0;pwned") {
			t.Fatalf("ls -o %s does not show the group:\n%s", format, out)
		}
		if n := terminalControls(out); n > 0 {
			t.Fatalf("ls -o %s printed %d control characters:\n%q", format, n, out)
		}
	}
	p.reset()
	if err := runLs(ctx, p.f, lsOptions{output: "json"}); err != nil {
		t.Fatal(err)
	}
	raw := p.out.String()
	if n := terminalControls(strings.ReplaceAll(raw, "\n", "")); n > 0 {
		t.Fatalf("ls -o json printed %d raw control characters:\n%q", n, raw)
	}
	g, ok := findGroup(decodeList(t, raw), pgid)
	if !ok || g.Tag != hostileTag || len(g.Command) == 0 || g.Command[len(g.Command)-1] != hostileTag {
		t.Fatalf("ls -o json changed the strings: %+v", g)
	}
}

// A settled group with a long problem: the problem goes on its own line
// under COMMAND, and PGID stays as wide as a pgid. The problem is cleaned
// like every other string from the sandbox.
func TestLsProblemRowKeepsPGIDNarrow(t *testing.T) {
	problem := "reading /home/user/.local/state/sandtop/processes/abc/exit-code: \x1b[2Jpermission denied" + strings.Repeat(" and more", 4)
	code := 0
	doc := listDoc{Groups: []listGroup{
		{PGID: 4242, ID: "abc", Origin: "sandtop", State: "settled", Problem: problem, Command: []string{"sleep", "1"}, Members: []listProcess{}},
		{PGID: 51, ID: "def", Origin: "sandtop", State: "settled", ExitCode: &code, Command: []string{"true"}, Members: []listProcess{}},
	}}
	for _, wide := range []bool{false, true} {
		var b bytes.Buffer
		printListTable(&b, doc, wide, true, time.Now())
		out := b.String()
		lines := strings.Split(out, "\n")
		if at := strings.Index(lines[0], "STATE"); at < 0 || at > len("PGID")+4 {
			t.Fatalf("wide=%v: PGID is %d columns wide:\n%s", wide, at, out)
		}
		if !strings.Contains(out, "└ reading /home/user") || terminalControls(out) > 0 {
			t.Fatalf("wide=%v: the problem is missing or raw:\n%q", wide, out)
		}
		// The problem sits where COMMAND starts.
		cmdAt := strings.Index(lines[0], "COMMAND")
		for _, l := range lines {
			if i := strings.Index(l, "└"); i >= 0 && i != cmdAt {
				t.Fatalf("wide=%v: the problem starts at column %d, COMMAND at %d:\n%s", wide, i, cmdAt, out)
			}
		}
	}
}
