package daemon_test

import (
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
)

// readPids reads whitespace-separated pids from the Start stream's stdout
// until n of them arrived.
func readPids(t *testing.T, s interface {
	Receive() bool
	Msg() *process.StartResponse
	Err() error
}, n int) []int {
	t.Helper()
	var out strings.Builder
	for s.Receive() {
		out.Write(s.Msg().GetEvent().GetData().GetStdout())
		if f := strings.Fields(out.String()); len(f) >= n && strings.HasSuffix(out.String(), "\n") {
			pids := make([]int, 0, n)
			for _, x := range f[:n] {
				p, err := strconv.Atoi(x)
				if err != nil {
					t.Fatalf("bad pid %q in %q", x, out.String())
				}
				pids = append(pids, p)
			}
			return pids
		}
	}
	t.Fatalf("stream ended before %d pids: %q (%v)", n, out.String(), s.Err())
	return nil
}

// SendSignal reaches the started pid alone, as in envd: a plain start has
// no group of its own, and its background children live on (group-wide
// control is the Supervisor's SignalGroup). The end event still comes once
// the leader is gone, though the children hold the output pipes.
func TestSendSignalReachesOnlyThePid(t *testing.T) {
	for _, sig := range []process.Signal{process.Signal_SIGNAL_SIGTERM, process.Signal_SIGNAL_SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			env := daemontest.Start(t, daemon.Config{})
			c := env.Client
			pid, s := startBg(t, c, startReq("sh", "-c", `sleep 100 & a=$!; sh -c 'sleep 100 & echo $!; wait' & b=$!; sleep 0.05; echo $a $b; wait`))
			pids := readPids(t, s, 3) // inner sleep, a, b
			t.Cleanup(func() {
				for _, p := range pids {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			})
			if _, err := c.Process.SendSignal(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendSignalRequest{
				Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}, Signal: sig})); err != nil {
				t.Fatal(err)
			}
			r := &result{}
			for s.Receive() {
				r.add(s.Msg().GetEvent())
			}
			if r.end == nil || r.end.GetExitCode() != -1 || !strings.HasPrefix(r.end.GetStatus(), "signal: ") {
				t.Errorf("end = %v, want exit -1 with a signal status", r.end)
			}
			for _, p := range pids {
				if !alive(p) {
					t.Errorf("child %d died with the started pid; envd signals the pid alone", p)
				}
			}
		})
	}
}

func TestSendSignalUnknownPid(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	_, err := env.Client.Process.SendSignal(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendSignalRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: 12345}}, Signal: process.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeNotFound, "process with pid 12345 not found")
}
