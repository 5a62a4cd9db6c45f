package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/testwait"
)

// The CLI against a real envd (E2B's daemon, built from its packages/envd):
// SANDTOP_TEST_ENVD names the binary; the test is skipped without it. envd
// must run as root, outside Firecracker (-isnotfc). Only --envd URL is
// given: no runtime root, no protocol choice.

// startRealEnvd runs the envd binary on a free port and returns its URL.
func startRealEnvd(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("SANDTOP_TEST_ENVD")
	if bin == "" {
		t.Skip("SANDTOP_TEST_ENVD does not name an envd binary")
	}
	if os.Geteuid() != 0 {
		t.Skip("envd runs as root")
	}
	_, port, _ := net.SplitHostPort(freeLoopbackAddr(t))
	cmd := exec.Command(bin, "-isnotfc", "-port", port)
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start envd %s: %v", bin, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("envd output:\n%s", tail(logs.String(), 30))
		}
	})
	url := "http://127.0.0.1:" + port
	waitHealthy(t, url)
	return url
}

// freeLoopbackAddr is a loopback host:port nothing listens on (just now).
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// waitHealthy polls url's /health until it answers 2xx.
func waitHealthy(t *testing.T, url string) {
	t.Helper()
	testwait.For(t, 15*time.Second, url+" to answer /health", func() bool {
		res, err := http.Get(url + "/health")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode/100 == 2
	})
}

func TestCLIOnRealEnvd(t *testing.T) {
	url := startRealEnvd(t)
	e := []string{"--envd", url}
	with := func(args ...string) []string { return append(append([]string{}, args[0]), append(e, args[1:]...)...) }

	mustSandtop(t, with("ls")...)

	r := sandtop(t, with("run", "--wait", "--", "bash", "-c", "echo hi; echo oops >&2; exit 3")...)
	if r.code != 3 || r.stdout != "hi\n" || !strings.Contains(r.stderr, "oops") {
		t.Errorf("run --wait: exit %d stdout %q stderr %q; want 3, hi, oops", r.code, r.stdout, r.stderr)
	}

	out := mustSandtop(t, with("run", "--tag", "envd-bg", "--", "bash", "-c", "sleep 300 | sleep 301")...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	testwait.For(t, 15*time.Second, "the group running in ls -o json", func() bool {
		g, ok := findGroup(decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)), pgid)
		return ok && g.State == "running" && g.Tag == "envd-bg" && len(g.Members) >= 2
	})
	mustSandtop(t, with("kill", "--grace", "2s", strconv.Itoa(pgid))...)
	if g, _ := findGroup(decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)), pgid); g.State != "settled" {
		t.Errorf("after kill the group is %q, want settled", g.State)
	}

	out = mustSandtop(t, with("term", "--tag", "envd-term", "--", "sleep", "300")...)
	var tpid int
	if _, err := fmt.Sscanf(out, "terminal pid %d", &tpid); err != nil {
		t.Fatalf("term printed %q: %v", out, err)
	}
	listed := false
	for _, term := range decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)).Terminals {
		listed = listed || (term.PID == tpid && term.Tag == "envd-term")
	}
	if !listed {
		t.Errorf("terminal %d not listed", tpid)
	}
	mustSandtop(t, with("kill", "--grace", "2s", strconv.Itoa(tpid))...)
	testwait.For(t, 10*time.Second, "the terminal gone from ls", func() bool {
		for _, term := range decodeList(t, mustSandtop(t, with("ls", "-o", "json")...)).Terminals {
			if term.PID == tpid {
				return false
			}
		}
		return true
	})
}

// The plain-Start facts sandtop's daemon copies (its TestPlainStart* tests
// check the same there): the child is not a group leader, so setsid --wait
// under it execs in place; errors for an unknown pid, cwd and user.
func TestRealEnvdPlainStartFacts(t *testing.T) {
	url := startRealEnvd(t)
	c, err := envd.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := func(c *envd.Client, cfg *process.ProcessConfig) (pid uint32, stdout string, end *process.ProcessEvent_EndEvent, err error) {
		s, err := c.Process.Start(ctx, connect.NewRequest(&process.StartRequest{Process: cfg}))
		if err != nil {
			return 0, "", nil, err
		}
		defer s.Close()
		for s.Receive() {
			ev := s.Msg().GetEvent()
			if st := ev.GetStart(); st != nil {
				pid = st.GetPid()
			}
			stdout += string(ev.GetData().GetStdout())
			if ev.GetEnd() != nil {
				end = ev.GetEnd()
			}
		}
		return pid, stdout, end, s.Err()
	}

	pid, out, _, err := start(c, &process.ProcessConfig{Cmd: "setsid", Args: []string{"--wait", "sh", "-c", `echo $$ $(cut -d' ' -f5,6 /proc/$$/stat)`}})
	if err != nil {
		t.Fatal(err)
	}
	p := strconv.Itoa(int(pid))
	if f := strings.Fields(out); len(f) != 3 || f[0] != p || f[1] != p || f[2] != p {
		t.Errorf("envd: under setsid --wait pid pgid sid = %q, want all %s", out, p)
	}

	_, _, end, err := start(c, &process.ProcessConfig{Cmd: "no-such-program-xyz"})
	if err != nil || end.GetExitCode() != 127 {
		t.Errorf("envd: unknown program: end %v err %v, want exit 127", end, err)
	}
	bad := "/no/such/dir"
	_, _, _, err = start(c, &process.ProcessConfig{Cmd: "true", Cwd: &bad})
	if connect.CodeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "cwd '/no/such/dir' does not exist") {
		t.Errorf("envd: bad cwd: %v", err)
	}
	uc, _ := envd.Dial(url, envd.WithUser("no-such-user-xyz"))
	_, _, _, err = start(uc, &process.ProcessConfig{Cmd: "true"})
	if connect.CodeOf(err) != connect.CodeUnauthenticated || !strings.Contains(err.Error(), "invalid username: 'no-such-user-xyz'") {
		t.Errorf("envd: bad user: %v", err)
	}
	_, err = c.Process.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: 99999999}}, Signal: process.Signal_SIGNAL_SIGTERM}))
	if connect.CodeOf(err) != connect.CodeNotFound || !strings.Contains(err.Error(), "process with pid 99999999 not found") {
		t.Errorf("envd: unknown pid: %v", err)
	}
}
