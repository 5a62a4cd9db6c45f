package daemon_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/testwait"
)

// KillAll must also reach work a started process moved into a new session
// (as the seam's wrapper does with setsid): killing only the started group
// would leave that session orphaned and running.
func TestKillAllReachesSessionsItsProcessesStarted(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	_, _ = startBg(t, env.Client, startReq("/bin/bash", "-c", `setsid --wait sleep 1000 & echo $! ; wait`))
	var escaped int
	testwait.For(t, 10*time.Second, "the sleep in its own session", func() bool {
		escaped = sleepInOwnSession(t)
		return escaped > 0
	})
	if err := env.Daemon.KillAll(ctxFor(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 10*time.Second, "the escaped session to die", func() bool { return !alive(escaped) })
}

// sleepInOwnSession finds this test's "sleep 1000" that leads its session
// and descends from this test binary.
func sleepInOwnSession(t *testing.T) int {
	for _, pid := range descendantsOfThisTest(t) {
		if cmd, sid := cmdAndSid(pid); cmd == "sleep\x001000\x00" && sid == pid {
			return pid
		}
	}
	return 0
}

// descendantsOfThisTest lists every pid whose ancestry reaches this test process.
func descendantsOfThisTest(t *testing.T) []int {
	self := pidOf(t)
	var out []int
	entries, _ := readDirNames("/proc")
	for _, name := range entries {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		for p, hops := pid, 0; p > 1 && hops < 64; hops++ {
			pp := ppidOf(p)
			if pp == self {
				out = append(out, pid)
				break
			}
			p = pp
		}
	}
	return out
}

func cmdAndSid(pid int) (string, int) {
	cmd, _ := readFileString("/proc/" + strconv.Itoa(pid) + "/cmdline")
	stat, _ := readFileString("/proc/" + strconv.Itoa(pid) + "/stat")
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 4 {
		return cmd, 0
	}
	sid, _ := strconv.Atoi(f[3])
	return cmd, sid
}

func ppidOf(pid int) int {
	stat, err := readFileString("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	f := strings.Fields(stat[strings.LastIndexByte(stat, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	pp, _ := strconv.Atoi(f[1])
	return pp
}
