package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The compat part: sandtop's own groups on stock envd (no extension), where
// each group runs under sandtop's uploaded supervisor. With -envd-bin (or
// SANDTOP_TEST_ENVD) naming E2B's envd, built by scripts/build-envd.sh, it
// runs as root on loopback; without, sandtop's daemon in compat mode
// stands in for it.

// envdBin is the stock envd to measure against (-envd-bin).
var envdBin string

// compatTarget is a daemon with stock envd's surface, running for the part.
type compatTarget struct {
	name, url, root string
	cmd             *exec.Cmd
}

func (b *bench) startCompatTarget() (*compatTarget, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	t := &compatTarget{url: "http://127.0.0.1:" + port, root: filepath.Join(b.dir, "compat-root")}
	if envdBin != "" {
		if os.Geteuid() != 0 {
			return nil, fmt.Errorf("envd runs as root (-envd-bin %s)", envdBin)
		}
		t.name = "stock envd"
		t.cmd = exec.Command(envdBin, "-isnotfc", "-no-cgroups", "-port", port)
	} else {
		t.name = "sandtop serve --compat envd"
		t.cmd = exec.Command(b.bin, "serve", "--compat", "envd", "--listen", "127.0.0.1:"+port,
			"--state-dir", filepath.Join(b.dir, "compat-state"), "--kill-on-exit")
		t.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}
	}
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var logs bytes.Buffer
	t.cmd.Stdout, t.cmd.Stderr = &logs, &logs
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := b.compatCLI(t, "ls"); err == nil {
			return t, nil
		}
		if time.Now().After(deadline) {
			t.stop()
			return nil, fmt.Errorf("%s did not answer on %s: %s", t.name, t.url, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the daemon and whatever still runs under it.
func (t *compatTarget) stop() { stopDaemonTree(t.cmd) }

// stopDaemonTree kills what runs under a daemon the bench started, then
// the daemon: SIGTERM, and SIGKILL after 5 s.
func stopDaemonTree(cmd *exec.Cmd) {
	for _, pid := range descendantsOf(cmd.Process.Pid) {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (b *bench) compatCLI(t *compatTarget, args ...string) ([]byte, error) {
	cmd := exec.Command(b.bin, append(append([]string{}, args[:1]...), append([]string{"--envd", t.url, "--runtime-root", t.root}, args[1:]...)...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("sandtop %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// compatFigures starts n groups through the CLI, counts the processes and
// memory they cost, lists them, and kills them all with one command.
func (b *bench) compatFigures(n int) error {
	t, err := b.startCompatTarget()
	if err != nil {
		return err
	}
	defer t.stop()
	fmt.Fprintf(os.Stderr, "compat: %d groups on %s\n", n, t.name)
	base := len(descendantsOf(t.cmd.Process.Pid))

	// The first run uploads the supervisor; it is timed on its own.
	first := time.Now()
	if _, err := b.compatCLI(t, "run", "--", "true"); err != nil {
		return err
	}
	firstTook := time.Since(first)
	b.add(fmt.Sprintf("%s: first `run` (uploads the supervisor)", t.name), ms(firstTook), "", "", "")

	var mu sync.Mutex
	var pgids []int
	var firstErr error
	work := make(chan struct{})
	var wg sync.WaitGroup
	start := time.Now()
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				out, err := b.compatCLI(t, "run", "--tag", "compat", "--", "sleep", "3600")
				var pid, pgid int
				if err == nil {
					_, err = fmt.Sscanf(string(out), "pid %d pgid %d", &pid, &pgid)
				}
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if err == nil {
					pgids = append(pgids, pgid)
				}
				mu.Unlock()
			}
		}()
	}
	for range n {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	startTook := time.Since(start)
	if firstErr != nil {
		return firstErr
	}
	procs := descendantsOf(t.cmd.Process.Pid)
	perGroup := float64(len(procs)-base) / float64(n)
	var pss uint64
	for _, p := range procs {
		pss += pssOf(p)
	}
	b.add(fmt.Sprintf("%s: start %d groups (`run`, 4 at a time)", t.name, n), fmt.Sprintf("%.1f s", startTook.Seconds()),
		fmt.Sprintf("%.1f ms a group", float64(startTook.Milliseconds())/float64(n)), "", "")
	b.add(fmt.Sprintf("%s: processes and PSS per group, %d groups", t.name, n), fmt.Sprintf("%.2f processes", perGroup),
		fmt.Sprintf("%.2f MiB PSS", float64(pss)/float64(n)/(1<<20)), "", "≤ 2 processes")

	var listed int
	kinds := map[string]int{}
	lsTimes, err := timed(3, func() error {
		out, err := b.compatCLI(t, "ls", "-o", "json")
		if err != nil {
			return err
		}
		var doc struct {
			Groups []struct {
				State, Supervisor string
			}
		}
		if err := json.Unmarshal(out, &doc); err != nil {
			return err
		}
		listed = 0
		clear(kinds)
		for _, g := range doc.Groups {
			if g.State == "running" {
				listed++
				kinds[g.Supervisor]++
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if listed != n {
		return fmt.Errorf("ls -o json listed %d running groups, want %d", listed, n)
	}
	fmt.Fprintf(os.Stderr, "compat: supervised by %v\n", kinds)
	psTimes, err := timed(5, func() error { return exec.Command("ps", "-e").Run() })
	if err != nil {
		return err
	}
	b.add(fmt.Sprintf("%s: `ls -o json`, %d groups", t.name, n), ms(p50(lsTimes)), ms(p50(psTimes))+" (ps -e)",
		times(p50(lsTimes), p50(psTimes)), "≤ 2× ps -e")

	args := []string{"kill", "--grace", "2s"}
	for _, p := range pgids {
		args = append(args, strconv.Itoa(p))
	}
	start = time.Now()
	if _, err := b.compatCLI(t, args...); err != nil {
		return err
	}
	killTook := time.Since(start)
	left := len(descendantsOf(t.cmd.Process.Pid)) - base
	b.add(fmt.Sprintf("%s: `kill` of all %d groups, one command", t.name, n), fmt.Sprintf("%.1f s", killTook.Seconds()),
		fmt.Sprintf("%d processes left", left), "", "< 30 s")
	return nil
}

// descendantsOf lists the live descendants of pid, from /proc.
func descendantsOf(pid int) []int {
	children := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		ppid, _ := strconv.Atoi(f[1])
		children[ppid] = append(children[ppid], p)
	}
	var out []int
	todo := append([]int(nil), children[pid]...)
	for len(todo) > 0 {
		p := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		out = append(out, p)
		todo = append(todo, children[p]...)
	}
	return out
}

// pssOf is a process's proportional set size in bytes (0 when unreadable).
func pssOf(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
