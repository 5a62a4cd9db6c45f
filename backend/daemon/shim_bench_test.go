package daemon_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/shim"
)

// BenchmarkIdleShims starts SANDTOP_BENCH_GROUPS (default 100; the target
// is stated for 1,000) idle groups, each a sleep under its own shim, and
// reports per shim the resident and proportional set size (targets: RSS
// under 4 MiB) and, over 10 s of idling, the CPU all shims used together
// as a percentage of one core (target for 1,000: under 1%).
func BenchmarkIdleShims(b *testing.B) {
	n := 100
	if v, err := strconv.Atoi(os.Getenv("SANDTOP_BENCH_GROUPS")); err == nil && v > 0 {
		n = v
	}
	env := daemontest.Start(b, daemon.Config{})
	ctx := context.Background()
	var shims []int
	for i := 0; i < n; i++ {
		dir := filepath.Join(env.RuntimeRoot, "processes", fmt.Sprintf("g%d", i))
		req := connect.NewRequest(startReq("sleep", "100000"))
		req.Header().Set(daemon.SessionDirHeader, dir)
		s, err := env.Client.Process.Start(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		if !s.Receive() {
			b.Fatal(s.Err())
		}
		pid := int(s.Msg().GetEvent().GetStart().GetPid())
		_ = s.Close()
		sid, err := shim.ReadProc(pid)
		if err != nil {
			b.Fatal(err)
		}
		shims = append(shims, sid.Sid)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var rss, pss float64
		for _, pid := range shims {
			r, p := rssPss(pid)
			rss += r
			pss += p
		}
		before := cpuTicks(shims)
		start := time.Now()
		time.Sleep(10 * time.Second)
		used := float64(cpuTicks(shims)-before) / 100 / time.Since(start).Seconds() * 100
		b.ReportMetric(rss/float64(n)/1024, "rss-MiB/shim")
		b.ReportMetric(pss/float64(n)/1024, "pss-MiB/shim")
		b.ReportMetric(used, "cpu-%-all-shims")
		b.ReportMetric(float64(n), "groups")
	}
}

// rssPss reads VmRSS and Pss (KiB) from smaps_rollup.
func rssPss(pid int) (rss, pss float64) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		v, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "Rss:":
			rss = v
		case "Pss:":
			pss = v
		}
	}
	return rss, pss
}

// cpuTicks sums utime+stime of pids.
func cpuTicks(pids []int) uint64 {
	var sum uint64
	for _, pid := range pids {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		u, _ := strconv.ParseUint(f[11], 10, 64)
		s, _ := strconv.ParseUint(f[12], 10, 64)
		sum += u + s
	}
	return sum
}
