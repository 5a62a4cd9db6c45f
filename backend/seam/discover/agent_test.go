package discover

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"sandtop/groupstate"
)

// startGroup starts `sleep` as the leader of a new process group and
// returns its pgid; the group is killed when the test ends.
func startGroup(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "30")
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	return cmd.Process.Pid
}

// deadPgid returns the pgid of a group that has fully exited and been reaped.
func deadPgid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

func writeState(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// The scan script runs for real (locally, under bash) against a layout
// written the way dsh-subprocess-e2b writes it.
func TestAgentScanScriptJudgesStates(t *testing.T) {
	root := filepath.Join(t.TempDir(), ".dsh-e2b")
	live, lingering, dead := startGroup(t), startGroup(t), deadPgid(t)
	p := filepath.Join(root, "processes")
	writeState(t, filepath.Join(p, "a-running"), map[string]string{"pid": strconv.Itoa(live) + "\n", "exit-code": "", "stdout.log": "hello\n"})
	writeState(t, filepath.Join(p, "b-lingering"), map[string]string{"pid": strconv.Itoa(lingering), "exit-code": "3\n", "stderr.log": ""})
	writeState(t, filepath.Join(p, "c-settled"), map[string]string{"pid": strconv.Itoa(dead), "exit-code": "0", "argv": "make\x00-j4\x00a b\n\x00"})
	writeState(t, filepath.Join(p, "d-starting"), map[string]string{"pid": "", "exit-code": "", "environment": "A=1\x00"})
	writeState(t, filepath.Join(p, "e-unsafe"), map[string]string{"pid": "1", "exit-code": ""})
	writeState(t, filepath.Join(p, "f-nul"), map[string]string{"pid": "12\x0034", "exit-code": ""})
	writeState(t, filepath.Join(root, "terminals", "t-setup"), map[string]string{"runner.bash": "exit 0", "argv": "bash\x00"})
	writeState(t, filepath.Join(root, "terminals", "t-running"), nil)
	// A symlinked dir is not the agent's and is skipped.
	if err := os.Symlink(filepath.Join(p, "a-running"), filepath.Join(p, "z-link")); err != nil {
		t.Fatal(err)
	}

	out, err := exec.Command("/bin/bash", "-c", agentScanScript, "dsh-scan", root).Output()
	if err != nil {
		t.Fatalf("scan script: %v", err)
	}
	snap, err := parseAgentScan(out)
	if err != nil {
		t.Fatal(err)
	}
	d := snap.discovery(root)

	type want struct {
		state groupstate.State
		pgid  int
		code  int // -1: none
	}
	wants := map[string]want{
		"a-running":   {groupstate.Running, live, -1},
		"b-lingering": {groupstate.LeaderExited, lingering, 3},
		"c-settled":   {groupstate.Settled, dead, 0},
		"d-starting":  {groupstate.Unpublished, 0, -1},
		"e-unsafe":    {groupstate.Unpublished, 0, -1}, // with a Problem
		"f-nul":       {groupstate.Settled, 1234, -1},  // NULs are stripped; no such group lives
	}
	if len(d.Groups) != len(wants) {
		t.Fatalf("groups %+v", d.Groups)
	}
	for _, g := range d.Groups {
		w := wants[g.ID]
		code := -1
		if g.ExitCode != nil {
			code = *g.ExitCode
		}
		if g.State != w.state || g.Pgid != w.pgid || code != w.code || !g.Agent {
			t.Errorf("%s: state %s pgid %d code %d problem %q; want %+v", g.ID, g.State, g.Pgid, code, g.Problem, w)
		}
		if g.StateDir != filepath.Join(p, g.ID) {
			t.Errorf("%s: dir %s", g.ID, g.StateDir)
		}
		if (g.ID == "e-unsafe") != (g.Problem != "") {
			t.Errorf("%s: problem %q", g.ID, g.Problem)
		}
	}
	if g := d.Groups[0]; g.Stdout == nil || g.Stdout.Size != 6 || g.Stdout.Path != filepath.Join(p, "a-running", "stdout.log") ||
		g.Stderr != nil || len(g.SpillPaths) != 1 || g.SpillPaths[0] != g.Stdout.Path {
		t.Errorf("spills of a-running: %+v %+v %v", g.Stdout, g.Stderr, g.SpillPaths)
	}
	if g := d.Groups[2]; !slices.Equal(g.Argv, []string{"make", "-j4", "a b\n"}) || d.Groups[0].Argv != nil {
		t.Errorf("argv of c-settled %q, of a-running %q", g.Argv, d.Groups[0].Argv)
	}
	if g := d.Groups[1]; g.Stderr == nil || g.Stderr.Size != 0 {
		t.Errorf("empty stderr spill of b-lingering: %+v", g.Stderr)
	}
	if len(d.Terminals) != 2 || d.Terminals[0].ID != "t-running" || d.Terminals[0].SettingUp ||
		d.Terminals[1].ID != "t-setup" || !d.Terminals[1].SettingUp {
		t.Errorf("terminals %+v", d.Terminals)
	}
}

func TestAgentScanOfMissingRootIsEmpty(t *testing.T) {
	out, err := exec.Command("/bin/bash", "-c", agentScanScript, "dsh-scan", filepath.Join(t.TempDir(), "absent")).Output()
	if err != nil {
		t.Fatal(err)
	}
	snap, err := parseAgentScan(out)
	if err != nil || len(snap.entries) != 0 || len(snap.procs) == 0 {
		t.Fatalf("entries %d procs %d err %v", len(snap.entries), len(snap.procs), err)
	}
}

func TestAgentRootDefault(t *testing.T) {
	if AgentRoot("") != "/home/user/workspace/.dsh-e2b" || AgentRoot("/w") != "/w/.dsh-e2b" {
		t.Fatal(AgentRoot(""), AgentRoot("/w"))
	}
}
