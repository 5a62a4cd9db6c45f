package wrapper

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// writeTerminalState lays the runner's private files out as the seam
// does: a 0700 directory holding 0600 files.
func writeTerminalState(t *testing.T, files TerminalFiles) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "term")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, f := range files.Named() {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func runRunner(t *testing.T, dir string) (string, int) {
	t.Helper()
	cmd := exec.Command("/bin/bash", filepath.Join(dir, TerminalRunnerFile), dir)
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = []string{"SECRET_TOKEN=leak", "PATH=/usr/bin:/bin"}
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), code
}

func TestTerminalRunnerInstallsExactArgvAndEnv(t *testing.T) {
	marker, err := NewBoundary()
	if err != nil {
		t.Fatal(err)
	}
	argv := []string{"/usr/bin/env"}
	env := []string{"A=1", "WITH SPACE=x y", "MULTI=line1\nline2", "EMPTY="}
	files, err := NewTerminalFiles(argv, env, marker)
	if err != nil {
		t.Fatal(err)
	}
	dir := writeTerminalState(t, files)
	out, code := runRunner(t, dir)
	if code != 0 {
		t.Fatalf("exit %d: %q", code, out)
	}
	want := marker + "A=1\nWITH SPACE=x y\nMULTI=line1\nline2\nEMPTY=\n"
	if out != want {
		t.Fatalf("output\n got %q\nwant %q", out, want)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("private files left behind: %v", left)
	}
}

func TestTerminalRunnerPassesArgumentsVerbatim(t *testing.T) {
	marker, _ := NewBoundary()
	argv := []string{"/usr/bin/printf", "[%s]", "-n", "a b", "$HOME", "'q'", ""}
	files, err := NewTerminalFiles(argv, nil, marker)
	if err != nil {
		t.Fatal(err)
	}
	out, code := runRunner(t, writeTerminalState(t, files))
	if want := marker + "[-n][a b][$HOME]['q'][]"; out != want || code != 0 {
		t.Fatalf("got %q (exit %d), want %q", out, code, want)
	}
}

func TestTerminalRunnerRefusesEmptyArgv(t *testing.T) {
	marker, _ := NewBoundary()
	files, _ := NewTerminalFiles([]string{"x"}, nil, marker)
	files.Argv = nil
	dir := writeTerminalState(t, files)
	out, code := runRunner(t, dir)
	if code != 125 || strings.Contains(out, marker) {
		t.Fatalf("exit %d, output %q; want 125 and no boundary", code, out)
	}
	left, _ := os.ReadDir(dir)
	if len(left) != 0 {
		t.Fatalf("private files left behind: %v", left)
	}
}

func TestNewTerminalFilesRejectsBadInput(t *testing.T) {
	marker, _ := NewBoundary()
	cases := []struct {
		name      string
		argv, env []string
		marker    string
		want      string
	}{
		{"empty argv", nil, nil, marker, "non-empty program"},
		{"empty program", []string{""}, nil, marker, "non-empty program"},
		{"assignment-shaped program", []string{"A=b"}, nil, marker, "must not contain '='"},
		{"NUL in argv", []string{"x", "a\x00b"}, nil, marker, "argv must not contain NUL"},
		{"NUL in env", []string{"x"}, []string{"A=\x00"}, marker, "environment must not contain NUL"},
		{"env without =", []string{"x"}, []string{"A"}, marker, "not NAME=VALUE"},
		{"env without name", []string{"x"}, []string{"=v"}, marker, "not NAME=VALUE"},
		{"bad marker", []string{"x"}, nil, "nope", "boundary is malformed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := NewTerminalFiles(c.argv, c.env, c.marker)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestBoundaryShape(t *testing.T) {
	a, _ := NewBoundary()
	b, _ := NewBoundary()
	if a == b || !IsBoundary(a) || !IsBoundary(b) {
		t.Fatalf("boundaries %q %q", a, b)
	}
	for _, s := range []string{"", BoundaryPrefix, a[:len(a)-1], strings.ToUpper(a), a + "0"} {
		if IsBoundary(s) {
			t.Fatalf("IsBoundary(%q) = true", s)
		}
	}
}
