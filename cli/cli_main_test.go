package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/shim"
	"sandtop/testreap"
)

// The CLI tests run the real sandtop binary against one private local
// sandbox (isolated runtime, state and config directories), started on
// demand by the first command and stopped with everything in it at the
// end.

var (
	sandtopBin string
	testEnv    []string
)

func TestMain(m *testing.M) {
	// The in-process daemons (daemontest) start this test binary as their
	// shims.
	shim.RunIfSubcommand()
	testreap.Warden()
	os.Exit(runCLITests(m))
}

func runCLITests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "stc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	sandtopBin = filepath.Join(dir, "sandtop")
	build := exec.Command("go", "build", "-o", sandtopBin, "sandtop")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build sandtop:", err)
		return 1
	}
	testEnv = append(os.Environ(),
		"SANDTOP_RUNTIME_DIR="+filepath.Join(dir, "run"),
		"SANDTOP_STATE_DIR="+filepath.Join(dir, "state"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"),
		"SANDTOP_CONFIG=",
	)
	code := m.Run()
	// Tear down every group and terminal, then the daemon.
	stop := exec.Command(sandtopBin, "daemon", "stop", "--grace", "500ms")
	stop.Env = testEnv
	if out, err := stop.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "daemon stop: %v\n%s", err, out)
	}
	if code != 0 {
		if b, err := os.ReadFile(filepath.Join(dir, "state", "daemon.log")); err == nil {
			fmt.Fprintf(os.Stderr, "daemon log (tail):\n%s\n", tail(string(b), 40))
		}
	}
	return code
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// result is one finished sandtop invocation.
type result struct {
	stdout, stderr string
	code           int
}

// sandtop runs the binary with args on the shared test sandbox and waits
// for it (at most a minute).
func sandtop(t *testing.T, args ...string) result {
	t.Helper()
	return sandtopEnv(t, testEnv, args...)
}

// sandtopEnv runs the binary with args in env.
func sandtopEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, sandtopBin, args...)
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Env = env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("sandtop %v: %v", args, err)
	}
	return r
}

// mustSandtop runs sandtop and fails the test unless it exits 0.
func mustSandtop(t *testing.T, args ...string) string {
	t.Helper()
	r := sandtop(t, args...)
	if r.code != 0 {
		t.Fatalf("sandtop %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

// runDetached starts argv with "sandtop run" and returns its pgid.
func runDetached(t *testing.T, argv ...string) int {
	t.Helper()
	out := mustSandtop(t, append([]string{"run", "--"}, argv...)...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	return pgid
}

// listJSON runs "sandtop ls -o json" and decodes it.
func listJSON(t *testing.T) listDoc {
	t.Helper()
	return decodeList(t, mustSandtop(t, "ls", "-o", "json"))
}

// decodeList decodes what "ls -o json" printed.
func decodeList(t *testing.T, out string) listDoc {
	t.Helper()
	var doc listDoc
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("ls -o json is not JSON: %v\n%s", err, out)
	}
	if doc.Version != jsonVersion {
		t.Fatalf("ls -o json version %d, want %d", doc.Version, jsonVersion)
	}
	return doc
}

func findGroup(doc listDoc, pgid int) (listGroup, bool) {
	for _, g := range doc.Groups {
		if g.PGID == pgid {
			return g, true
		}
	}
	return listGroup{}, false
}
