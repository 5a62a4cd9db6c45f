package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// A DeepSeek Harness agent's provider (dsh-subprocess-e2b) in the sandbox:
// through a plain envd Start it runs a login shell that makes the state
// directory <workspace>/.dsh-e2b/processes/<id> and exec-chains into
// `env -i … setsid --wait -- bash -c <inner> dsh-e2b <state dir> …`. The
// inner wrapper publishes its pgid into pid and the command's status into
// exit-code. Under an envd-faithful daemon setsid does not fork, so the
// published group is the Start pid.
const agentInner = `d=$1; shift
ps -o pgid= -p $$ | tr -d ' ' > "$d/pid"
rm -f "$d/environment"
bash -c "$1" > >(base64 -w0) 2> >(base64 -w0 >&2)
echo $? > "$d/exit-code"
wait`

// startAgentGroup plays the provider against the daemon at endpoint and
// returns the Start pid and the stream's end (closed when it ends).
func startAgentGroup(t *testing.T, endpoint, workspace, command string) (uint32, <-chan struct{}) {
	t.Helper()
	c, err := envd.Dial(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	dir := filepath.Join(workspace, wrapper.AgentRootDir, wrapper.ProcessesDir, fmt.Sprintf("a9e2b%03d-0000-4000-8000-%012d", time.Now().UnixNano()%1000, time.Now().UnixNano()%1e12))
	q := wrapper.Quote(dir)
	outer := fmt.Sprintf(`mkdir -p %[1]s && chmod 700 %[1]s && : > %[1]s/pid && : > %[1]s/exit-code && : > %[1]s/environment &&
exec env -i PATH="$PATH" setsid --wait -- bash -c %[2]s dsh-e2b %[1]s %[3]s`, q, wrapper.Quote(agentInner), wrapper.Quote(command))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stdin := false
	s, err := c.Process.Start(ctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-l", "-c", outer}, Envs: map[string]string{"TERM": "dumb"}},
		Stdin:   &stdin,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Receive() || s.Msg().GetEvent().GetStart() == nil {
		t.Fatalf("no start event: %v", s.Err())
	}
	pid := s.Msg().GetEvent().GetStart().GetPid()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for s.Receive() {
		}
		_ = s.Close()
	}()
	t.Cleanup(func() {
		// Once the leader has ended its group id may belong to another
		// test's group by now; the test daemon's stop ends what is left.
		select {
		case <-ended:
		default:
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
		}
	})
	return pid, ended
}

// agentGroupListedThenKilled checks, with only the target flags in args,
// that ls and ls -o json list the agent's group under the pid the Start
// answered, as an agent group, and that kill ends it.
func agentGroupListedThenKilled(t *testing.T, target []string, endpoint string) {
	workspace := t.TempDir()
	pid, ended := startAgentGroup(t, endpoint, workspace, "sleep 300")
	ls := func(extra ...string) string {
		return mustSandtop(t, append(append([]string{"ls"}, target...), extra...)...)
	}
	var g listGroup
	// Until its wrapper calls setsid, the Start's process is still in the
	// daemon's group, listed as what a plain Start runs (origin envd).
	testwait.For(t, 20*time.Second, "the agent's group, published, in ls -o json", func() bool {
		var ok bool
		g, ok = findGroup(decodeList(t, ls("-o", "json")), int(pid))
		return ok && g.State == "running" && g.Origin != "envd"
	})
	if g.Origin != "agent" || !strings.HasPrefix(g.ID, "a9e2b") {
		t.Errorf("group %d: origin %q id %q; want the agent's", pid, g.Origin, g.ID)
	}
	if !strings.Contains(ls(), strconv.Itoa(int(pid))+" ") {
		t.Errorf("ls table lacks group %d", pid)
	}
	mustSandtop(t, append(append([]string{"kill"}, target...), "--grace", "2s", strconv.Itoa(int(pid)))...)
	select {
	case <-ended:
	case <-time.After(10 * time.Second):
		t.Fatalf("the provider's Start stream did not end after kill")
	}
	if err := syscall.Kill(-int(pid), 0); err == nil {
		testwait.For(t, 5*time.Second, "the group empty", func() bool { return !groupHasLiveMember(int(pid)) })
	}
}

// groupHasLiveMember reads /proc for a member of pgid that is not a zombie.
func groupHasLiveMember(pgid int) bool {
	out, _ := exec.Command("ps", "-e", "-o", "pgid=,stat=").Output()
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && f[0] == strconv.Itoa(pgid) && !strings.HasPrefix(f[1], "Z") {
			return true
		}
	}
	return false
}

func TestAgentGroupOnDaemonListedAndKilled(t *testing.T) {
	mustSandtop(t, "ls") // starts the local daemon
	var st struct {
		Socket string `json:"socket"`
	}
	if err := json.Unmarshal([]byte(mustSandtop(t, "daemon", "status", "-o", "json")), &st); err != nil || st.Socket == "" {
		t.Fatalf("daemon status: %v %+v", err, st)
	}
	agentGroupListedThenKilled(t, nil, "unix:"+st.Socket)
}

func TestAgentGroupOnCompatListedAndKilled(t *testing.T) {
	url := startCompatServe(t)
	agentGroupListedThenKilled(t, []string{"--envd", url}, url)
}

func TestAgentGroupOnRealEnvdListedAndKilled(t *testing.T) {
	url := startRealEnvd(t)
	agentGroupListedThenKilled(t, []string{"--envd", url}, url)
}

// startCompatServe runs "sandtop serve --compat envd" (stock envd's surface)
// on a free loopback port and returns its URL.
func startCompatServe(t *testing.T) string {
	t.Helper()
	addr := freeLoopbackAddr(t)
	cmd := exec.Command(sandtopBin, "serve", "--compat", "envd", "--listen", addr, "--state-dir", t.TempDir())
	// Ends with the test binary (SIGTERM, so it cleans up), even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Env = testEnv
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	url := "http://" + addr
	waitHealthy(t, url)
	return url
}
