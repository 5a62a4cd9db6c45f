package daemon_test

import (
	"strconv"
	"strings"
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

func TestSendSignalKillsWholeGroup(t *testing.T) {
	for _, sig := range []process.Signal{process.Signal_SIGNAL_SIGTERM, process.Signal_SIGNAL_SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			env := daemontest.Start(t, daemon.Config{})
			c := env.Client
			// A shell with two background grandchildren (one a nested shell with its own child).
			pid, s := startBg(t, c, startReq("sh", "-c", `sleep 100 & a=$!; sh -c 'sleep 100 & echo $!; wait' & b=$!; sleep 0.05; echo $a $b; wait`))
			pids := readPids(t, s, 3) // inner sleep, a, b
			for _, p := range pids {
				if !alive(p) {
					t.Fatalf("grandchild %d not running before the signal", p)
				}
			}
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
			eventually(t, 5*time.Second, "grandchildren gone", func() bool {
				for _, p := range append(pids, int(pid)) {
					if alive(p) {
						return false
					}
				}
				return true
			})
		})
	}
}

func TestSendSignalUnknownPid(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	_, err := env.Client.Process.SendSignal(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendSignalRequest{
		Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: 12345}}, Signal: process.Signal_SIGNAL_SIGKILL}))
	wantCode(t, err, connect.CodeNotFound, "process 12345 not found")
}
