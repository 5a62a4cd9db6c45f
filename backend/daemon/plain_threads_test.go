package daemon_test

import (
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
)

// A plain Start, as E2B's SDKs make it, costs the daemon no OS thread while
// the process runs and leaves none behind when it ends. (os/exec's Wait
// held one thread per running process, and the Go runtime never gives a
// thread back, so 1,000 such processes left 1,000 idle threads.)
func TestPlainStartsHoldNoThreadPerProcess(t *testing.T) {
	const n = 300
	c, pid := startChildDaemon(t)
	before := threadsOf(t, pid)
	streams := make([]*connect.ServerStreamForClient[process.StartResponse], 0, n)
	pids := make([]uint32, 0, n)
	for range n {
		p, s := startBg(t, c, startReq("sleep", "120"))
		pids = append(pids, p)
		streams = append(streams, s)
	}
	running := threadsOf(t, pid)
	for _, p := range pids {
		if _, err := c.Process.SendSignal(ctxFor(t, 10*time.Second), connect.NewRequest(&process.SendSignalRequest{
			Process: bySel(p), Signal: process.Signal_SIGNAL_SIGKILL,
		})); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range streams {
		r, err := drainStart(s)
		if err != nil {
			t.Fatalf("stream of %d: %v", pids[i], err)
		}
		if r.end == nil || r.end.GetExited() || r.end.GetStatus() != "signal: killed" || r.end.GetError() != "signal: killed" {
			t.Fatalf("end of %d: %v", pids[i], r.end)
		}
	}
	after := threadsOf(t, pid)
	t.Logf("daemon threads: %d before, %d with %d processes running, %d after they ended", before, running, n, after)
	if running-before >= 40 {
		t.Errorf("%d running plain processes added %d daemon threads", n, running-before)
	}
	if after-before >= 40 {
		t.Errorf("%d ended plain processes left %d more daemon threads", n, after-before)
	}
}

// The end event of a plain Start says how the process ended in envd's
// words (status, and the same text as error unless it exited 0): exit
// codes above 127 and signals, decoded from the pidfd's waitid.
func TestPlainStartEndEvents(t *testing.T) {
	c, _ := startChildDaemon(t)
	for _, tc := range []struct {
		script string
		exited bool
		code   int32
		status string
	}{
		{"exit 0", true, 0, "exit status 0"},
		{"exit 200", true, 200, "exit status 200"},
		{"kill -TERM $$", false, -1, "signal: terminated"},
		{"kill -KILL $$", false, -1, "signal: killed"},
		{"ulimit -c 0; kill -QUIT $$", false, -1, "signal: quit"},
	} {
		r := run(t, c, startReq("sh", "-c", tc.script))
		e := r.end
		if e.GetExited() != tc.exited || e.GetExitCode() != tc.code || e.GetStatus() != tc.status {
			t.Errorf("%s: end = %v, want exited=%v code=%d status %q", tc.script, e, tc.exited, tc.code, tc.status)
		}
		wantErr := tc.status
		if tc.code == 0 {
			wantErr = ""
		}
		if e.GetError() != wantErr {
			t.Errorf("%s: error = %q, want %q", tc.script, e.GetError(), wantErr)
		}
	}
}
