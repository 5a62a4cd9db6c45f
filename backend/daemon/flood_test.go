package daemon_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

// Under 1,000 ReadFile calls on FIFOs and 100 subscribers that never read
// one busy writer, the daemon keeps fewer than 64 threads and still lists
// its groups in under a second. (A FIFO read used to pin a thread each, and
// crashed a daemon at its thread limit.)
func TestFloodKeepsThreadsAndListingFast(t *testing.T) {
	if raceEnabled {
		t.Skip("a figure for the daemon as built, not under the race detector; .ci/run runs it without")
	}
	c, pid := startChildDaemon(t)
	hello, err := c.Hello(ctxFor(t, 10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(hello.GetRuntimeRoot(), "spill")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	writer, _ := startBg(t, c, startReq("sh", "-c", "exec cat /dev/zero"))

	// Stalled subscribers: their client's flow-control window is small and
	// nobody reads it.
	sock := strings.TrimPrefix(c.Target, "unix:")
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}
	var p2 http.Protocols
	p2.SetUnencryptedHTTP2(true)
	tr.Protocols = &p2
	tr.HTTP2 = &http.HTTP2Config{MaxReceiveBufferPerStream: 64 << 10, MaxReceiveBufferPerConnection: 64 << 10}
	t.Cleanup(tr.CloseIdleConnections)
	stalled, err := envd.Dial(c.Target, envd.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for range 100 {
		s, err := stalled.Process.Connect(ctx, connect.NewRequest(&process.ConnectRequest{Process: bySel(writer)}))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
	}

	var wg sync.WaitGroup
	var mu sync.Mutex
	refused := 0
	for range 1000 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Supervisor.ReadFile(ctx, connect.NewRequest(&sandtopv1.ReadFileRequest{Path: fifo}))
			if connect.CodeOf(err) == connect.CodeFailedPrecondition {
				mu.Lock()
				refused++
				mu.Unlock()
			}
		}()
	}
	peak, slowest := 0, time.Duration(0)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for flooding := true; flooding; {
		select {
		case <-done:
			flooding = false
		default:
		}
		peak = max(peak, threadsOf(t, pid))
		start := time.Now()
		if _, err := c.Supervisor.ListGroups(ctxFor(t, 30*time.Second), connect.NewRequest(&sandtopv1.ListGroupsRequest{})); err != nil {
			t.Fatal(err)
		}
		slowest = max(slowest, time.Since(start))
	}
	t.Logf("1000 FIFO ReadFiles (%d refused) and 100 stalled subscribers: peak %d daemon threads, slowest ListGroups %s",
		refused, peak, slowest.Round(time.Millisecond))
	if refused != 1000 {
		t.Errorf("%d of 1000 FIFO reads were refused", refused)
	}
	if peak >= 64 {
		t.Errorf("the daemon reached %d threads", peak)
	}
	if slowest >= time.Second {
		t.Errorf("ListGroups took %s under the flood", slowest)
	}
}

// threadsOf is the number of OS threads of process pid.
func threadsOf(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Threads:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	t.Fatalf("no Threads line in /proc/%d/status", pid)
	return 0
}
