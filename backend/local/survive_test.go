package local

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// cli runs the sandtop binary against p's directories.
func cli(t *testing.T, p Paths, args ...string) string {
	t.Helper()
	cmd := exec.Command(sandtopBin, args...)
	cmd.Env = append(os.Environ(), EnvRuntimeDir+"="+p.RuntimeDir, EnvStateDir+"="+p.StateDir, "XDG_CONFIG_HOME="+p.StateDir)
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("sandtop %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr)
	}
	return string(out)
}

func TestProcessesSurviveTheCLIAndAreFoundByTheNextOne(t *testing.T) {
	p := isolatedPaths(t)
	t.Cleanup(func() {
		cmd := exec.Command(sandtopBin, "daemon", "stop", "--grace", "500ms")
		cmd.Env = append(os.Environ(), EnvRuntimeDir+"="+p.RuntimeDir, EnvStateDir+"="+p.StateDir)
		_ = cmd.Run()
	})
	// The first sandtop starts the daemon, starts a group and exits.
	var pid, pgid int
	if _, err := fmt.Sscanf(cli(t, p, "run", "--", "sleep", "300"), "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatal(err)
	}
	daemon := Probe(t.Context(), p.Socket())
	if !daemon.Healthy {
		t.Fatalf("no daemon after the first sandtop exited: %+v", daemon)
	}
	if err := syscall.Kill(-pgid, 0); err != nil {
		t.Fatalf("group %d did not survive the CLI's exit: %v", pgid, err)
	}
	// The next sandtop (a new process) finds it through the same daemon.
	var doc struct {
		Groups []struct {
			PGID  int    `json:"pgid"`
			State string `json:"state"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(cli(t, p, "ls", "-o", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, g := range doc.Groups {
		found = found || (g.PGID == pgid && g.State == "running")
	}
	if !found {
		t.Fatalf("the second sandtop does not list group %d: %+v", pgid, doc)
	}
	if again := Probe(t.Context(), p.Socket()); again.PID != daemon.PID {
		t.Fatalf("the second sandtop started another daemon (%d, was %d)", again.PID, daemon.PID)
	}
	// daemon stop tears the group down, then stops the daemon.
	cli(t, p, "daemon", "stop", "--grace", "500ms")
	testwait.For(t, 10*time.Second, fmt.Sprintf("group %d to end after daemon stop", pgid), func() bool { return syscall.Kill(-pgid, 0) != nil })
}
