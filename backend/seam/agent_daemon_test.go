package seam

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/groupstate"
	"sandtop/sandbox"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// compatDaemon starts our daemon as a stock envd (--compat) on loopback
// TCP, guarded by a token, and a seam Runtime over it working in cwd.
func compatDaemon(t *testing.T, cwd string) (processconnect.ProcessClient, *Runtime) {
	t.Helper()
	env := daemontest.StartTCP(t, daemon.Config{Compat: true, Token: "dsh-test-token"})
	rt, err := NewRuntimeClients(context.Background(), env.Client.Process, env.Client.Supervisor, RuntimeConfig{
		RuntimeRoot: filepath.Join(cwd, ".sandtop"), Cwd: cwd, PollInterval: 20 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	return env.Client.Process, rt
}

// startAgentProcess plays dsh-subprocess-e2b: through the daemon's
// Process.Start it runs a bash script that makes the state dir, starts the
// inner wrapper as a new session and group with `setsid --wait`, publishes
// the group id into pid and the direct command's status into exit-code.
func startAgentProcess(t *testing.T, proc processconnect.ProcessClient, stateDir, command string) {
	t.Helper()
	inner := `d=$1; shift
ps -o pgid= -p $$ | tr -d ' ' > "$d/pid"
bash -c "$1" > >(tee "$d/stdout.log" >/dev/null)
echo $? > "$d/exit-code"
wait`
	dir := wrapper.Quote(stateDir)
	outer := fmt.Sprintf(`mkdir -p %[1]s && chmod 700 %[1]s && : > %[1]s/pid && : > %[1]s/exit-code &&
exec setsid --wait bash -c %[2]s dsh-e2b %[1]s %[3]s`, dir, wrapper.Quote(inner), wrapper.Quote(command))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	stdin := false
	stream, err := proc.Start(ctx, connect.NewRequest(&process.StartRequest{
		Process: &process.ProcessConfig{Cmd: "/bin/bash", Args: []string{"-c", outer}},
		Stdin:   &stdin,
	}))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for stream.Receive() {
		}
		_ = stream.Close()
	}()
}

func TestAgentDiscoverAndTeardownThroughDaemon(t *testing.T) {
	cwd := t.TempDir()
	proc, rt := compatDaemon(t, cwd)
	root := AgentRoot(cwd)
	procs := filepath.Join(root, "processes")

	// A group still running; a group whose direct command exited 3 while a
	// background child holds it; an entry settled long ago.
	startAgentProcess(t, proc, filepath.Join(procs, "aaaa-running"), "echo hello; exec sleep 300")
	startAgentProcess(t, proc, filepath.Join(procs, "bbbb-lingering"), "sleep 300 & exit 3")
	old := filepath.Join(procs, "cccc-settled")
	if err := os.MkdirAll(old, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"pid": "4194000\n", "exit-code": "7\n", "stderr.log": "boom\n"} {
		if err := os.WriteFile(filepath.Join(old, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d := pollAgent(ctx, t, proc, root, func(d AgentDiscovery) bool {
		return len(d.Groups) == 3 && d.Groups[0].State == groupstate.Running && d.Groups[0].Stdout != nil &&
			d.Groups[0].Stdout.Size == 6 && d.Groups[1].State == groupstate.LeaderExited
	})
	running, lingering, settled := d.Groups[0], d.Groups[1], d.Groups[2]
	if !running.Agent || running.Pgid <= 1 || running.ExitCode != nil || running.Problem != "" {
		t.Fatalf("running group %+v", running)
	}
	if lingering.Pgid <= 1 || lingering.ExitCode == nil || *lingering.ExitCode != 3 {
		t.Fatalf("leader-exited group %+v", lingering)
	}
	if settled.State != groupstate.Settled || settled.ExitCode == nil || *settled.ExitCode != 7 ||
		settled.Stderr == nil || settled.Stderr.Size != 5 {
		t.Fatalf("settled entry %+v", settled)
	}

	// The runtime's own view of the same sandbox finds the same groups.
	if via, err := rt.discoverAgent(ctx, ""); err != nil || len(via.Groups) != 3 || via.Root != root {
		t.Fatalf("DiscoverAgent: %+v %v", via, err)
	}
	// So does the one discovery path the runtime's own ListGroups uses,
	// given the agent's root: same judgement, marked as the agent's.
	gs, err := rt.discoverGroups(ctx, root, sandbox.OriginAgent)
	if err != nil || len(gs) != 3 {
		t.Fatalf("DiscoverGroups: %+v %v", gs, err)
	}
	for i, g := range gs {
		want := d.Groups[i].PublishedGroup
		if g.ID != want.ID || g.Pgid != want.Pgid || g.Origin != sandbox.OriginAgent || want.Origin != sandbox.OriginAgent ||
			(g.ExitCode == nil) != (want.ExitCode == nil) || len(g.SpillPaths) != len(want.SpillPaths) {
			t.Fatalf("DiscoverGroups %+v, DiscoverAgent %+v", g, want)
		}
	}
	if own, err := rt.listGroups(ctx); err != nil || len(own) != 0 {
		t.Fatalf("the runtime root holds no agent group: %+v %v", own, err)
	}
	for _, g := range []AgentGroup{running, lingering, settled} {
		var phases []TeardownPhase
		err := rt.teardownAgentGroup(ctx, g, 2*time.Second, func(ev TeardownEvent) { phases = append(phases, ev.Phase) })
		if err != nil {
			t.Fatalf("teardown %s: %v", g.ID, err)
		}
		if len(phases) == 0 || phases[len(phases)-1] != PhaseEmpty {
			t.Fatalf("teardown %s phases %v, want to end proven empty", g.ID, phases)
		}
	}
	d = pollAgent(ctx, t, proc, root, func(d AgentDiscovery) bool {
		return d.Groups[0].State == groupstate.Settled && d.Groups[1].State == groupstate.Settled
	})
	// The groups are empty: no process of either is left (zombies aside).
	for _, g := range []AgentGroup{running, lingering} {
		if err := syscall.Kill(-g.Pgid, 0); err == nil {
			if liveMembers(t, g.Pgid) {
				t.Fatalf("process group %d of %s still has live members", g.Pgid, g.ID)
			}
		} else if !errors.Is(err, syscall.ESRCH) {
			t.Fatal(err)
		}
	}
	unpublished := AgentGroup{PublishedGroup: PublishedGroup{ID: "x", State: groupstate.Unpublished}, Agent: true}
	if err := rt.teardownAgentGroup(ctx, unpublished, time.Second, nil); !errors.Is(err, ErrAgentUnpublished) {
		t.Fatalf("teardown of an unpublished group: %v", err)
	}
}

func pollAgent(ctx context.Context, t *testing.T, proc processconnect.ProcessClient, root string, ok func(AgentDiscovery) bool) AgentDiscovery {
	t.Helper()
	return testwait.Value(t, 30*time.Second, func() (AgentDiscovery, error) {
		d, err := discoverAgentAt(ctx, proc, root)
		if err == nil && !ok(d) {
			err = fmt.Errorf("last discovery %+v", d)
		}
		return d, err
	})
}

// liveMembers reads /proc for a non-zombie member of pgid.
func liveMembers(t *testing.T, pgid int) bool {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(b)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) > 2 && f[2] == fmt.Sprint(pgid) && f[0] != "Z" && f[0] != "X" {
			return true
		}
	}
	return false
}
