package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/target"
	"sandtop/testwait"
)

// ls -A and SANDBOX/PGID through the binary: two real daemons as config
// targets (alpha, the default, and beta), and a third target whose socket
// nothing serves.

type allBench struct {
	env, envGone []string // the config without and with the dead target
}

func newAllBench(t *testing.T) *allBench {
	t.Helper()
	// Each is a daemon process of its own: a daemon signals only its own
	// sandbox's groups, which for a daemon inside this test process would
	// be every group any daemon the test started runs.
	alpha, beta := startServe(t, nil), startServe(t, nil)
	dir := t.TempDir()
	body := fmt.Sprintf("target = \"alpha\"\n[targets.alpha]\nsocket = %q\n[targets.beta]\nsocket = %q\n", alpha, beta)
	gone := body + fmt.Sprintf("[targets.gone]\nsocket = %q\n", filepath.Join(dir, "nobody.sock"))
	write := func(name, text string) []string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return append(append([]string{}, testEnv...), "SANDTOP_CONFIG="+p, "SANDTOP_TARGET=")
	}
	return &allBench{env: write("two.toml", body), envGone: write("gone.toml", gone)}
}

// startServe runs "sandtop serve" on a unix socket in a process of its
// own, which ends (and ends its groups) with the test, or if the test
// binary dies. env is its base environment beside PATH and LANG.
func startServe(t *testing.T, env []string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "stserve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "s.sock")
	serve := exec.Command(sandtopBin, "serve", "--listen", "unix:"+sock, "--state-dir", filepath.Join(dir, "state"), "--kill-on-exit")
	serve.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "LANG=C.UTF-8"}, env...)
	serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	testwait.For(t, 20*time.Second, "the daemon's socket", func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
	return sock
}

func (b *allBench) must(t *testing.T, args ...string) string {
	t.Helper()
	r := sandtopEnv(t, b.env, args...)
	if r.code != 0 {
		t.Fatalf("sandtop %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (b *allBench) start(t *testing.T, target string, argv ...string) int {
	t.Helper()
	out := b.must(t, append([]string{"run", "--target", target, "--"}, argv...)...)
	var pid, pgid int
	if _, err := fmt.Sscanf(out, "pid %d pgid %d", &pid, &pgid); err != nil {
		t.Fatalf("run printed %q: %v", out, err)
	}
	return pgid
}

// state is the group's state in that target's own listing ("" if absent).
func (b *allBench) state(t *testing.T, target string, pgid int) string {
	t.Helper()
	doc := decodeList(t, b.must(t, "ls", "--target", target, "-o", "json"))
	if g, ok := findGroup(doc, pgid); ok {
		return g.State
	}
	return ""
}

// tableRow finds the table row whose first two cells are these.
func tableRow(out, first, second string) ([]string, bool) {
	for _, line := range strings.Split(out, "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == first && f[1] == second {
			return f, true
		}
	}
	return nil, false
}

func TestLsAllListsEverySandboxAndKillTakesSandboxSlashPGID(t *testing.T) {
	b := newAllBench(t)
	a1 := b.start(t, "alpha", "sleep", "300")
	b1 := b.start(t, "beta", "sleep", "300")
	b2 := b.start(t, "beta", "sh", "-c", "echo from-beta; exec sleep 300")

	// One table, SANDBOX first, groups of both sandboxes; all listed: exit 0.
	out := b.must(t, "ls", "-A")
	if !strings.HasPrefix(out, "SANDBOX") {
		t.Fatalf("ls -A has no SANDBOX column first:\n%s", out)
	}
	for _, want := range [][2]string{{"alpha", itoa(a1)}, {"beta", itoa(b1)}, {"beta", itoa(b2)}} {
		if _, ok := tableRow(out, want[0], want[1]); !ok {
			t.Fatalf("ls -A lacks %v:\n%s", want, out)
		}
	}
	names := b.must(t, "ls", "-A", "-o", "name")
	for _, want := range []string{fmt.Sprintf("alpha/%d\n", a1), fmt.Sprintf("beta/%d\n", b1)} {
		if !strings.Contains(names, want) {
			t.Fatalf("ls -A -o name lacks %q:\n%s", want, names)
		}
	}

	// An unreachable sandbox is a row of its own; the others still list.
	r := sandtopEnv(t, b.envGone, "ls", "-A")
	if _, ok := tableRow(r.stdout, "beta", itoa(b1)); r.code != exitError || !strings.Contains(r.stderr, "could not list 1 of") || !ok {
		t.Fatalf("ls -A with a dead target: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if row, ok := tableRow(r.stdout, "gone", "-"); !ok || row[2] != "unreachable" {
		t.Fatalf("the dead target has no row of its own:\n%s", r.stdout)
	}
	r = sandtopEnv(t, b.envGone, "ls", "-A", "-o", "json")
	var doc allListDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("ls -A -o json: %v\n%s", err, r.stdout)
	}
	states := map[string]sandboxRow{}
	for _, sb := range doc.Sandboxes {
		states[sb.Sandbox] = sb
	}
	if states["alpha"].State != sandboxListed || states["beta"].State != sandboxListed ||
		states["gone"].State != sandboxUnreachable || states["gone"].Error == "" {
		t.Fatalf("ls -A -o json sandboxes: %+v", doc.Sandboxes)
	}
	found := map[string]bool{}
	for _, g := range doc.Groups {
		found[g.Sandbox+"/"+strconv.Itoa(g.PGID)] = true
	}
	if !found["alpha/"+itoa(a1)] || !found["beta/"+itoa(b1)] || found["alpha/"+itoa(b1)] {
		t.Fatalf("ls -A -o json groups: %v", found)
	}

	// Completion: a command's own target flags, and SANDBOX/.
	if out := b.must(t, "__complete", "kill", "--target", "beta", ""); !strings.Contains(out, "\n"+itoa(b1)+"\t") && !strings.HasPrefix(out, itoa(b1)+"\t") {
		t.Fatalf("kill --target beta completion lacks %d:\n%s", b1, out)
	}
	if out := b.must(t, "__complete", "kill", "beta/"); !strings.Contains(out, "beta/"+itoa(b1)+"\t") || strings.Contains(out, itoa(a1)) {
		t.Fatalf("kill beta/ completion:\n%s", out)
	}

	// logs beta/PGID reads beta's group from alpha's command line.
	testwait.For(t, 20*time.Second, "logs beta/PGID", func() bool {
		r := sandtopEnv(t, b.env, "logs", "beta/"+itoa(b2))
		return r.code == 0 && strings.Contains(r.stdout, "from-beta")
	})

	// kill beta/PGID with alpha the default: gone in beta, the rest runs.
	b.must(t, "kill", "--grace", "2s", "beta/"+itoa(b1))
	if s := b.state(t, "beta", b1); s != "settled" && s != "" {
		t.Fatalf("after kill beta/%d it is %s", b1, s)
	}
	if s := b.state(t, "beta", b2); s != "running" {
		t.Fatalf("beta's other group is %s", s)
	}
	if s := b.state(t, "alpha", a1); s != "running" {
		t.Fatalf("alpha's group is %s", s)
	}
	// A bare pgid is the default sandbox's: alpha will not end beta's.
	if r := sandtopEnv(t, b.env, "kill", "--grace", "1s", itoa(b2)); r.code != exitError {
		t.Fatalf("kill of beta's pgid in alpha: exit %d %s", r.code, r.stderr)
	}
	if s := b.state(t, "beta", b2); s != "running" {
		t.Fatalf("alpha's kill reached beta's group: %s", s)
	}

	// One call, two sandboxes: signal, then kill, each group in its own.
	b.must(t, "signal", "STOP", "alpha/"+itoa(a1), "beta/"+itoa(b2))
	testwait.For(t, 20*time.Second, "both stopped", func() bool {
		return b.state(t, "alpha", a1) == "stopped" && b.state(t, "beta", b2) == "stopped"
	})
	out = b.must(t, "kill", "--grace", "1s", itoa(a1), "beta/"+itoa(b2))
	if !strings.Contains(out, fmt.Sprintf("group %d is empty", a1)) || !strings.Contains(out, fmt.Sprintf("group beta/%d is empty", b2)) {
		t.Fatalf("kill across sandboxes printed:\n%s", out)
	}
	for tg, pgid := range map[string]int{"alpha": a1, "beta": b2} {
		if s := b.state(t, tg, pgid); s != "settled" && s != "" {
			t.Fatalf("after the mixed kill, %s/%d is %s", tg, pgid, s)
		}
	}
}

// TestLsAllListsPausedWithoutDialling: E2B sandboxes in ls -A, the paused
// one as a row of its own and never dialled.
func TestLsAllListsPausedWithoutDialling(t *testing.T) {
	team := newE2BTeam(t)
	pgid := func() int {
		out := sandtopEnv(t, team.env(team.running.Addr), "run", "--target", "run", "--", "sleep", "300")
		var pid, pgid int
		if _, err := fmt.Sscanf(out.stdout, "pid %d pgid %d", &pid, &pgid); err != nil {
			t.Fatalf("run: %+v", out)
		}
		return pgid
	}()
	// A stock envd's ps may time out on a loaded machine: its row then
	// says so, and the listing is tried again.
	var r result
	testwait.For(t, time.Minute, "ls -A --e2b to list every sandbox", func() bool {
		r = sandtopEnv(t, team.env(team.running.Addr), "ls", "-A", "--e2b", "-o", "json")
		return r.code == 0
	})
	var doc allListDoc
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	rows := map[string]sandboxRow{}
	for _, sb := range doc.Sandboxes {
		if rows[sb.Sandbox].Sandbox != "" {
			t.Fatalf("%s listed twice: %+v", sb.Sandbox, doc.Sandboxes)
		}
		rows[sb.Sandbox] = sb
	}
	if rows["paused"].State != sandboxPaused || rows["run"].State != sandboxListed || rows["local"].State != sandboxListed {
		t.Fatalf("sandboxes: %+v", doc.Sandboxes)
	}
	if len(doc.Sandboxes) != 3 { // local, paused, run: the team and --e2b add no other sandbox
		t.Fatalf("sandboxes: %+v", doc.Sandboxes)
	}
	ok := false
	for _, g := range doc.Groups {
		ok = ok || (g.Sandbox == "run" && g.PGID == pgid)
	}
	if !ok {
		t.Fatalf("the running sandbox's group %d is not listed: %+v", pgid, doc.Groups)
	}
	team.noSideEffects(t, "ls -A")
}

// TestLsAllAsksAtMost16AtOnce: 40 sandboxes that each take a while to
// answer (and then fail); never more than 16 are being dialled.
func TestLsAllAsksAtMost16AtOnce(t *testing.T) {
	var entries []sandboxEntry
	for i := range 40 {
		entries = append(entries, sandboxEntry{name: fmt.Sprintf("s%d", i), r: resolved{Target: target.Target{Name: fmt.Sprintf("s%d", i)}}})
	}
	var mu sync.Mutex
	now, most, calls := 0, 0, 0
	var out, errOut bytes.Buffer
	f := &factory{Out: &out, ErrOut: &errOut, Now: time.Now,
		Sandboxes: func(context.Context) ([]sandboxEntry, error) { return entries, nil },
		Open: func(ctx context.Context, r resolved) (*connection, error) {
			mu.Lock()
			now, calls = now+1, calls+1
			most = max(most, now)
			mu.Unlock()
			time.Sleep(30 * time.Millisecond)
			mu.Lock()
			now--
			mu.Unlock()
			return nil, errors.New("no answer from " + r.Name)
		}}
	err := runLsAll(context.Background(), f, lsOptions{output: "table"})
	if err == nil || !strings.Contains(err.Error(), "could not list 40 of 40") {
		t.Fatalf("err %v", err)
	}
	if calls != 40 || most > lsAllParallel || most < 2 {
		t.Fatalf("%d dials, at most %d at once; want 40, 2..%d", calls, most, lsAllParallel)
	}
	if n := strings.Count(out.String(), "unreachable"); n != 40 {
		t.Fatalf("%d unreachable rows:\n%s", n, out.String())
	}
}

func TestParseGroupRef(t *testing.T) {
	for arg, want := range map[string]groupRef{
		"4123":                    {pgid: 4123},
		"local/4123":              {sandbox: "local", pgid: 4123},
		"socket:/run/a b.sock/77": {sandbox: "socket:/run/a b.sock", pgid: 77},
		"envd:10.0.0.5:49983/9":   {sandbox: "envd:10.0.0.5:49983", pgid: 9},
		"e2b:isb7x2k/812":         {sandbox: "e2b:isb7x2k", pgid: 812},
	} {
		if got, err := parseGroupRef("pgid", arg); err != nil || got != want {
			t.Errorf("%q: %+v, %v; want %+v", arg, got, err, want)
		}
	}
	for _, bad := range []string{"/12", "local/", "local/1", "local/0", "local/x", "x", "-3"} {
		if _, err := parseGroupRef("pgid", bad); exitCodeOf(err) != exitUsage {
			t.Errorf("%q: %v; want a usage error", bad, err)
		}
	}
	refs, err := parseGroupRefs([]string{"12", "a/12", "12", "a/12", "b/12"})
	if err != nil || len(refs) != 3 {
		t.Fatalf("refs %+v, %v", refs, err)
	}
}
