package daemon_test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
)

// A plain Start child stays in the daemon's process group and session, as
// under envd, so `setsid --wait` run directly under it does not fork: the
// started pid itself becomes the new session and group leader. (An agent's
// provider publishes that pid as its group.)
func TestPlainStartIsNotAGroupLeader(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ownPgid, _ := syscall.Getpgid(0)
	ownSid, _ := unix.Getsid(0)

	r := run(t, env.Client, startReq("sh", "-c", `cut -d' ' -f5,6 /proc/$$/stat`))
	if got, want := strings.TrimSpace(r.stdout.String()), strconv.Itoa(ownPgid)+" "+strconv.Itoa(ownSid); got != want {
		t.Errorf("plain child's pgid and sid = %q, want the daemon's %q", got, want)
	}

	// The inner shell prints its pid, pgid and sid; setsid exec'd it in
	// place, so all three are the started pid.
	r = run(t, env.Client, startReq("setsid", "--wait", "sh", "-c", `echo $$ $(cut -d' ' -f5,6 /proc/$$/stat)`))
	f := strings.Fields(r.stdout.String())
	pid := strconv.Itoa(int(r.pid))
	if len(f) != 3 || f[0] != pid || f[1] != pid || f[2] != pid {
		t.Errorf("under setsid --wait: pid pgid sid = %v, want all %s (setsid forked: %q)", f, pid, r.stderr.String())
	}
	if r.end.GetExitCode() != 0 || r.stderr.Len() != 0 {
		t.Errorf("end %v, stderr %q", r.end, r.stderr.String())
	}
}

// envd's child environment, cwd and user handling, here (the real-envd test
// checks the same against envd itself).
func TestPlainStartEnvCwdAsEnvd(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	home, _ := os.UserHomeDir()
	rel := "."
	req := startReq("sh", "-c", `pwd; echo "$HOME|$USER|$LOGNAME"`)
	req.Process.Cwd = &rel
	r := run(t, env.Client, req)
	lines := strings.Split(strings.TrimSpace(r.stdout.String()), "\n")
	if len(lines) != 2 || lines[0] != home || !strings.HasPrefix(lines[1], home+"|") {
		t.Errorf("cwd %q relative to home %s: got %q", rel, home, lines)
	}
}
