package daemon_test

import (
	"bufio"
	"net"
	"os"
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
)

// startChildDaemon re-executes the test binary as a standalone daemon and
// returns a client and the daemon's pid.
func startChildDaemon(b testing.TB) (*envd.Client, int) {
	state, err := os.MkdirTemp("", "sandtopd-child-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(state) })
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Ends with the test binary (SIGTERM, so it cleans up), even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	cmd.Env = append(os.Environ(), childEnvVar+"="+state)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	sock := filepath.Join(state, "d.sock")
	testwait.For(b, 20*time.Second, "the child daemon's socket", func() bool {
		c, err := net.Dial("unix", sock)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	c, err := envd.Dial("unix:" + sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c, cmd.Process.Pid
}

// vmHWM reads a process's peak resident set size in bytes.
func vmHWM(b *testing.B, pid int) int64 {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	b.Fatal("no VmHWM in /proc/<pid>/status")
	return 0
}

// BenchmarkDaemonPeakRSS: one process writes 1 GiB to one fast and one
// stalled subscriber; reports the daemon's peak RSS (target < 64 MiB).
func BenchmarkDaemonPeakRSS(b *testing.B) {
	const total = 1 << 30
	c, pid := startChildDaemon(b)
	fast, stalledClient := c, func() *envd.Client {
		cc, err := envd.Dial(c.Target)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(cc.Close)
		return cc
	}()
	b.SetBytes(total)
	for range b.N {
		gate := filepath.Join(os.TempDir(), "sandtop-rss-gate-"+strconv.Itoa(os.Getpid()))
		os.Remove(gate)
		req := startReq("sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.01; done; rm -f "+gate+"; exec head -c "+strconv.Itoa(total)+" /dev/zero")
		ppid, s := startBg(b, fast, req)
		stalled, err := stalledClient.Process.Connect(b.Context(), connect.NewRequest(&process.ConnectRequest{Process: bySel(ppid)}))
		if err != nil {
			b.Fatal(err)
		}
		if !stalled.Receive() {
			b.Fatal(stalled.Err())
		}
		touch(b, gate)
		n := 0
		for s.Receive() {
			n += len(s.Msg().GetEvent().GetData().GetStdout())
		}
		if s.Err() != nil || n != total {
			b.Fatalf("fast subscriber got %d bytes: %v", n, s.Err())
		}
		stalled.Close()
	}
	b.StopTimer()
	b.ReportMetric(float64(vmHWM(b, pid))/(1<<20), "peak-rss-MiB")
}
