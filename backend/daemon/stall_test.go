package daemon_test

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
)

// randomFile writes size random bytes (incompressible, so no codec can hide
// a stall) and returns its path.
func randomFile(t testing.TB, size int) string {
	t.Helper()
	b := make([]byte, size)
	rand.Read(b)
	p := filepath.Join(t.TempDir(), "random")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// catTimes starts cat of file n times over, with no stdin.
func catTimes(file string, n int) *process.StartRequest {
	return startReq("sh", "-c", "i=0; while [ $i -lt "+strconv.Itoa(n)+" ]; do cat "+file+"; i=$((i+1)); done")
}

// One subscriber stops reading; another reads every byte. The reader gets all
// of it, the process runs to its end, and the stalled one is cut off with
// ResourceExhausted when it reads again. 200 MB normally; 32 MB under -race
// or -short, where 200 MB takes close to a minute on two cores
// (BenchmarkStalledSubscriber runs the full 200 MB).
func TestStalledSubscriberIsCutOffAndOthersContinue(t *testing.T) {
	times := 25 // 200 MB
	if testing.Short() || raceEnabled {
		times = 4
	}
	for _, tr := range []transport{transports[0], transports[1]} {
		t.Run(tr.name, func(t *testing.T) {
			stalledSubscriber(t, tr, times)
		})
	}
}

func BenchmarkStalledSubscriber(b *testing.B) {
	for range b.N {
		stalledSubscriber(b, transports[0], 25)
	}
	b.SetBytes(25 * stallChunk)
}

const stallChunk = 8 << 20

func stalledSubscriber(t testing.TB, tr transport, times int) {
	t.Helper()
	const chunk = stallChunk
	var env *daemontest.Env
	if tr.tcp {
		env = daemontest.StartTCP(t, daemon.Config{})
	} else {
		env = daemontest.Start(t, daemon.Config{})
	}
	file := randomFile(t, chunk)
	fast := env.Dial(tr.opts...)
	slow := env.Dial(tr.opts...)
	gate := filepath.Join(env.RuntimeRoot, "go")
	req := startReq("sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.01; done; exec sh -c \"$0\"", catTimes(file, times).Process.Args[1])
	pid, s := startBg(t, fast, req)

	stalled, err := slow.Process.Connect(ctxFor(t, 120*time.Second), connect.NewRequest(&process.ConnectRequest{Process: bySel(pid)}))
	if err != nil {
		t.Fatal(err)
	}
	defer stalled.Close()
	if !stalled.Receive() || stalled.Msg().GetEvent().GetStart() == nil {
		t.Fatalf("stalled subscriber: no start event: %v", stalled.Err())
	}
	touch(t, gate) // the stalled subscriber now reads nothing more until the end

	began := time.Now()
	var got int
	var end *process.ProcessEvent_EndEvent
	for s.Receive() {
		ev := s.Msg().GetEvent()
		got += len(ev.GetData().GetStdout())
		if e := ev.GetEnd(); e != nil {
			end = e
		}
	}
	if err := s.Err(); err != nil {
		t.Fatalf("fast subscriber: %v", err)
	}
	elapsed := time.Since(began)
	if want := chunk * times; got != want || end == nil || end.GetExitCode() != 0 {
		t.Fatalf("fast subscriber got %d of %d bytes, end %v", got, want, end)
	}
	t.Logf("%s: fast subscriber read %d MB in %s (%.0f MB/s) with a stalled peer",
		tr.name, got>>20, elapsed.Round(time.Millisecond), float64(got)/1e6/elapsed.Seconds())

	var stalledBytes int
	for stalled.Receive() {
		stalledBytes += len(stalled.Msg().GetEvent().GetData().GetStdout())
		if stalled.Msg().GetEvent().GetEnd() != nil {
			t.Fatalf("stalled subscriber got the end event; it should have been cut off")
		}
	}
	wantCode(t, stalled.Err(), connect.CodeResourceExhausted, "subscriber fell behind by")
	t.Logf("stalled subscriber had %d KiB in flight when cut off: %v", stalledBytes>>10, stalled.Err())
}
