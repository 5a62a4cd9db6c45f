package daemon_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/testwait"
)

func TestChildEnvIsBuiltFromScratch(t *testing.T) {
	t.Setenv("SANDTOP_TEST_LEAK", "daemon-only")
	env := daemontest.Start(t, daemon.Config{Env: []string{"PATH=/usr/bin:/bin", "BASE=1", "OVER=base"}})
	req := startReq("env")
	req.Process.Envs = map[string]string{"OVER": "request", "REQ": "2"}
	r := run(t, env.Client, req)
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout.String()), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	if _, leaked := got["SANDTOP_TEST_LEAK"]; leaked {
		t.Errorf("the daemon's own environment leaked into the child")
	}
	for k, want := range map[string]string{"PATH": "/usr/bin:/bin", "BASE": "1", "OVER": "request", "REQ": "2"} {
		if got[k] != want {
			t.Errorf("%s = %q, want %q", k, got[k], want)
		}
	}
	for _, k := range []string{"HOME", "USER", "LOGNAME"} {
		if got[k] == "" {
			t.Errorf("%s missing", k)
		}
	}
	if len(got) != 7 {
		t.Errorf("child env has %d entries, want 7: %v", len(got), got)
	}
}

// The middle shell forks a grandchild and exits at once, so the grandchild
// is orphaned. The daemon, as subreaper, adopts it and must reap it when it
// exits: no zombie is left behind. A plain start shares the daemon's group
// (as in envd), so only a daemon that owns its OS process (ReapAllOrphans,
// as sandtop serve runs) can tell such an orphan is its to reap.
func TestOrphanedGrandchildIsReaped(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{ReapAllOrphans: true})
	_, s := startBg(t, env.Client, startReq("sh", "-c", `sh -c 'sleep 0.5 & echo $!'; sleep 100`))
	gc := readPids(t, s, 1)[0]
	adopted := false
	testwait.For(t, 10*time.Second, "the orphan to exit and be reaped", func() bool {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(gc) + "/stat"); err == nil {
			f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
			adopted = adopted || f[1] == strconv.Itoa(os.Getpid())
		}
		return !exists(gc)
	})
	if !adopted {
		t.Logf("note: never saw grandchild %d under the subreaper (it may have exited first)", gc)
	}
}
