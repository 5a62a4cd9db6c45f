package control

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The scan script, run by bash over a real directory, and its parser.
func TestStatesScanReadsEveryStateDirectory(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, "processes", rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a/pid", "123\n")
	write("a/argv", "sh\x00-c\x00echo a:b; x\x00\x00")
	write("a/tag", "t:1\n")
	write("a/stdout.log", "hello")
	write("b/pid", "456\n")
	write("b/exit-code", "3\n")
	write("b/argv", "true\x00")
	// Empty files read as empty, as a reader of each file would.
	write("d/pid", "321\n")
	write("d/exit-code", "0\n")
	write("d/argv", "")
	// A link in place of a file is not read.
	write("c/pid", "789\n")
	if err := os.Symlink(filepath.Join(root, "processes", "a", "tag"), filepath.Join(root, "processes", "c", "tag")); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("bash", "-c", statesScanScript, "bash", root).Output()
	if err != nil {
		t.Fatal(err)
	}
	states, err := parseStatesScan(out)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]StateFiles{}
	for _, s := range states {
		byID[s.ID] = s
	}
	a, b, c, d := byID["a"], byID["b"], byID["c"], byID["d"]
	if a.Pid == nil || *a.Pid != "123\n" || a.Tag == nil || *a.Tag != "t:1\n" || a.Argv == nil || *a.Argv != "sh\x00-c\x00echo a:b; x\x00\x00" || a.StdoutSize != 5 || a.StderrSize != -1 {
		t.Errorf("a: %+v", a)
	}
	if b.ExitCode == nil || *b.ExitCode != "3\n" || b.Argv == nil || *b.Argv != "true\x00" {
		t.Errorf("b: %+v", b)
	}
	if d.Argv == nil || *d.Argv != "" {
		t.Errorf("d: the empty argv file: %+v", d)
	}
	if c.Pid == nil || c.Tag != nil {
		t.Errorf("c: the linked tag was read: %+v", c)
	}
}
