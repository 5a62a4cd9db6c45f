package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The sdk part: E2B's JS SDK (sdktest/stream.mjs and scale.mjs) driving
// sandtop's daemon and, with -envd-bin, E2B's envd in the same run, one
// after the other, each fresh: a foreground run, a stream of zeros, a
// thousand background commands (started, listed by the SDK and by
// `sandtop ls`, killed), and the daemon's threads and memory around them.

// sdkDaemon is one daemon the SDK talks to, in debug mode, over TCP.
type sdkDaemon struct {
	name, url string
	cmd       *exec.Cmd
	memory    string // sandtop's daemon's --memory-dumps directory (-sdk-memory)
}

// sdkMemory is -sdk-memory: where sandtop's daemon dumps its memory.
var sdkMemory string

// dumpMemory has d write its next memory dump (see -sdk-memory), and
// waits for it; it returns the dump's number, 0 for none.
func (d *sdkDaemon) dumpMemory(n int) int {
	if d.memory == "" {
		return 0
	}
	_ = d.cmd.Process.Signal(syscall.SIGUSR1)
	heap := filepath.Join(d.memory, fmt.Sprintf("memory-%d.heap", n))
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if st, err := os.Stat(heap); err == nil && st.Size() > 0 {
			time.Sleep(100 * time.Millisecond) // the profile's last write
			break
		}
	}
	return n
}

// printMemory writes the breakdown of dumps 1 (before), 2 (running) and 3
// (65 s after) to stderr.
func (d *sdkDaemon) printMemory() {
	var cols []map[string]uint64
	var names []string
	for n := 1; n <= 3; n++ {
		data, err := os.ReadFile(filepath.Join(d.memory, fmt.Sprintf("memory-%d.txt", n)))
		if err != nil {
			fmt.Fprintf(os.Stderr, "sdk: memory dump %d: %v\n", n, err)
			return
		}
		m := map[string]uint64{}
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			f := strings.Fields(l)
			if len(f) != 2 {
				continue
			}
			v, _ := strconv.ParseUint(f[1], 10, 64)
			if n == 1 {
				names = append(names, f[0])
			}
			m[f[0]] = v
		}
		cols = append(cols, m)
	}
	fmt.Fprintf(os.Stderr, "sdk: %s's memory (dumps and heap profiles in %s)\n", d.name, d.memory)
	fmt.Fprintf(os.Stderr, "%-48s %12s %12s %12s %10s\n", "", "before", "running", "65 s after", "after-before")
	for _, name := range names {
		a, r, e := cols[0][name], cols[1][name], cols[2][name]
		fmt.Fprintf(os.Stderr, "%-48s %12d %12d %12d %+10d\n", name, a, r, e, int64(e)-int64(a))
	}
}

func (b *bench) startSDKDaemon(envd bool) (*sdkDaemon, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	d := &sdkDaemon{url: "http://" + addr}
	if envd {
		d.name = "stock envd"
		d.cmd = exec.Command(envdBin, "-isnotfc", "-no-cgroups", "-port", port)
	} else {
		d.name = "sandtop serve"
		d.cmd = exec.Command(b.bin, "serve", "--listen", addr, "--state-dir", filepath.Join(b.dir, "sdk-state-"+port), "--kill-on-exit")
		if sdkMemory != "" {
			d.memory = filepath.Join(sdkMemory, "daemon-"+port)
			d.cmd.Args = append(d.cmd.Args, "--memory-dumps", d.memory)
		}
		d.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}
	}
	d.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var logs bytes.Buffer
	d.cmd.Stdout, d.cmd.Stderr = &logs, &logs
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := b.sdkLs(d); err == nil {
			return d, nil
		}
		if time.Now().After(deadline) {
			d.stop()
			return nil, fmt.Errorf("%s did not answer on %s: %s", d.name, d.url, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (d *sdkDaemon) stop() { stopDaemonTree(d.cmd) }

// sdkLs runs `sandtop ls -o json` against d and counts the running
// groups of `sleep 600` it lists.
func (b *bench) sdkLs(d *sdkDaemon) (int, error) {
	cmd := exec.Command(b.bin, "ls", "-o", "json", "--envd", d.url)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("sandtop ls: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var doc struct {
		Groups []struct {
			State   string
			Members []struct{ Argv []string }
		}
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return 0, err
	}
	// A group per command; envd runs it as `bash -l -c "sleep 600"`,
	// which may or may not exec sleep.
	n := 0
	for _, g := range doc.Groups {
		for _, m := range g.Members {
			if g.State == "running" && strings.HasSuffix(strings.Join(m.Argv, " "), "sleep 600") {
				n++
				break
			}
		}
	}
	return n, nil
}

// sdkResult is what one daemon gave the SDK.
type sdkResult struct {
	name                         string
	run, stream, start, list     time.Duration
	streamSDKCPU                 time.Duration
	streamRSS, streamAnon        int // the daemon's peak RSS and anonymous RSS while streaming, kB
	listed, lsListed             int
	ls                           time.Duration
	kill                         time.Duration
	killed                       int
	threadsFresh, rssFresh       int // threads and RSS (kB) after the foreground runs, before the warm-up crowd
	threads0, threadsN, threadsE int
	rss0, rssN, rssE, rssR       int    // kB: before, with the n running, 2 s and 65 s after they ended
	anon0, anonR                 int    // kB: the anonymous part of rss0 and rssR (the rest is the binary's pages)
	load0, loadE                 string // load average (1 min) when the half began and ended
}

// sdkCompare runs the comparison and adds its rows.
func (b *bench) sdkCompare(mib, n int) error {
	const what = "E2B JS SDK"
	node, err := exec.LookPath("node")
	if err != nil {
		b.add(what, "skipped", "no node in PATH", "", "")
		return nil
	}
	sdkdir, err := filepath.Abs("sdktest")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(sdkdir, "node_modules", "e2b")); err != nil {
		b.add(what, "skipped", "no sdktest/node_modules (cd sdktest && npm ci)", "", "")
		return nil
	}
	kinds := []bool{false}
	if envdBin != "" {
		if os.Geteuid() != 0 {
			return fmt.Errorf("envd runs as root (-envd-bin %s)", envdBin)
		}
		kinds = []bool{true, false}
	}
	var results []sdkResult
	for _, envd := range kinds {
		// Each half on a fresh daemon, so that neither's memory figures
		// carry what the other left.
		d, err := b.startSDKDaemon(envd)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "sdk: %s on %s\n", d.name, d.url)
		r, err := b.sdkScale(node, sdkdir, d, n)
		d.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		if d, err = b.startSDKDaemon(envd); err != nil {
			return err
		}
		err = b.sdkStream(node, sdkdir, d, mib, &r)
		d.stop()
		if err != nil {
			return fmt.Errorf("%s: %w", d.name, err)
		}
		results = append(results, r)
	}
	ours := results[len(results)-1]
	var ref *sdkResult
	if len(results) == 2 {
		ref = &results[0]
	}
	row := func(what string, get func(r sdkResult) string, ratio func(o, e sdkResult) string, target string) {
		refText, ratioText := "no envd given (-envd-bin)", ""
		if ref != nil {
			refText = get(*ref)
			if ratio != nil {
				ratioText = ratio(ours, *ref)
			}
		}
		b.add(what, get(ours), refText, ratioText, target)
	}
	durRatio := func(get func(r sdkResult) time.Duration) func(o, e sdkResult) string {
		return func(o, e sdkResult) string { return times(get(o), get(e)) }
	}
	row("SDK: `commands.run('true')`, median of 20", func(r sdkResult) string { return ms(r.run) }, durRatio(func(r sdkResult) time.Duration { return r.run }), "")
	row(fmt.Sprintf("SDK: `commands.run` streaming %d MiB (onStdout), median of 3", mib),
		func(r sdkResult) string {
			return fmt.Sprintf("%.0f MiB/s", float64(mib)/r.stream.Seconds())
		}, func(o, e sdkResult) string {
			return fmt.Sprintf("%.2f× envd's rate", e.stream.Seconds()/o.stream.Seconds())
		}, "≥ envd's")
	row("SDK: the SDK's CPU while streaming", func(r sdkResult) string { return ms(r.streamSDKCPU) }, durRatio(func(r sdkResult) time.Duration { return r.streamSDKCPU }), "")
	row("SDK: daemon's peak RSS (anonymous) while streaming", func(r sdkResult) string {
		return fmt.Sprintf("%s (%s)", mibOf(r.streamRSS), mibOf(r.streamAnon))
	}, func(o, e sdkResult) string {
		return fmt.Sprintf("%.2f× (%.2f×)", float64(o.streamRSS)/float64(e.streamRSS), float64(o.streamAnon)/float64(e.streamAnon))
	}, "≤ envd's")
	row(fmt.Sprintf("SDK: start %d background `sleep 600`", n), func(r sdkResult) string { return fmt.Sprintf("%.1f s", r.start.Seconds()) }, durRatio(func(r sdkResult) time.Duration { return r.start }), "")
	row(fmt.Sprintf("SDK: `commands.list()` with %d running", n), func(r sdkResult) string {
		return fmt.Sprintf("%s (%d listed)", ms(r.list), r.listed)
	}, durRatio(func(r sdkResult) time.Duration { return r.list }), "")
	row(fmt.Sprintf("`sandtop ls -o json` with the SDK's %d running", n), func(r sdkResult) string {
		return fmt.Sprintf("%s (%d listed)", ms(r.ls), r.lsListed)
	}, durRatio(func(r sdkResult) time.Duration { return r.ls }), fmt.Sprintf("lists all %d", n))
	row(fmt.Sprintf("SDK: kill all %d (`commands.kill`, one by one)", n), func(r sdkResult) string {
		return fmt.Sprintf("%.1f s (%d killed)", r.kill.Seconds(), r.killed)
	}, durRatio(func(r sdkResult) time.Duration { return r.kill }), "≤ envd's")
	if sdkWarm > 0 {
		row(fmt.Sprintf("daemon threads and RSS fresh, before a warm-up crowd of %d", sdkWarm), func(r sdkResult) string {
			return fmt.Sprintf("%d, %s", r.threadsFresh, mibOf(r.rssFresh))
		}, nil, "")
	}
	row("daemon threads: before / running / after", func(r sdkResult) string {
		return fmt.Sprintf("%d / %d / %d", r.threads0, r.threadsN, r.threadsE)
	}, nil, fmt.Sprintf("< 40 running; after within 10%% of before"))
	row("daemon RSS: before / running / 2 s after / 65 s after", func(r sdkResult) string {
		return fmt.Sprintf("%s / %s / %s / %s", mibOf(r.rss0), mibOf(r.rssN), mibOf(r.rssE), mibOf(r.rssR))
	}, nil, "after within 10% of before")
	row("daemon anonymous RSS: before / 65 s after", func(r sdkResult) string {
		return fmt.Sprintf("%s / %s", mibOf(r.anon0), mibOf(r.anonR))
	}, nil, "")
	row("load average (1 min) when the half began / ended", func(r sdkResult) string {
		return r.load0 + " / " + r.loadE
	}, nil, "")
	return nil
}

func mibOf(kb int) string { return fmt.Sprintf("%.1f MiB", float64(kb)/1024) }

// sdkEnv is the SDK scripts' environment for d, with room for n
// background commands.
func sdkEnv(d *sdkDaemon, n int) []string {
	env := append(os.Environ(), "E2B_SANDBOX_URL="+d.url, "E2B_DEBUG=true",
		"E2B_ENVD_RPC_CONNECTIONS="+strconv.Itoa(n+200))
	if os.Geteuid() == 0 {
		// The SDK runs every command through a login shell: as nobody it
		// reads /etc/profile only, not whatever root's own profile runs
		// on the machine at hand (a version manager's rehash, say).
		env = append(env, "SDKTEST_USER=nobody")
	}
	return env
}

// sdkScale drives a fresh daemon through the SDK's scale script.
func (b *bench) sdkScale(node, sdkdir string, d *sdkDaemon, n int) (sdkResult, error) {
	r := sdkResult{name: d.name, load0: loadAverage()}
	pid := d.cmd.Process.Pid
	env := sdkEnv(d, n)

	// scale.mjs prints a line per phase and waits on stdin once the n
	// run, while the daemon's figures and `sandtop ls` are read.
	cmd := exec.Command(node, "scale.mjs", strconv.Itoa(n), strconv.Itoa(sdkWarm))
	cmd.Dir, cmd.Env = sdkdir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return r, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return r, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	lines := bufio.NewScanner(stdout)
	phase := func(want string) (int, time.Duration, error) {
		if !lines.Scan() {
			_ = cmd.Wait()
			return 0, 0, fmt.Errorf("scale.mjs ended before %q: %s", want, strings.TrimSpace(stderr.String()))
		}
		var p struct {
			Phase string
			N     int
			Ms    float64
		}
		if err := json.Unmarshal(lines.Bytes(), &p); err != nil || p.Phase != want {
			return 0, 0, fmt.Errorf("scale.mjs said %q, want phase %q", lines.Text(), want)
		}
		return p.N, time.Duration(p.Ms * float64(time.Millisecond)), nil
	}
	if _, r.run, err = phase("run"); err != nil {
		return r, err
	}
	r.threadsFresh, r.rssFresh = procStatus(pid, "Threads:"), procStatus(pid, "VmRSS:")
	if sdkWarm > 0 {
		// "Before" is a daemon that has served a smaller crowd the same
		// way (and one `sandtop ls`), then rested as long as "after"
		// does: what the n leave behind is what counts, not what any Go
		// daemon's first collections and first calls of each path cost.
		if _, _, err := phase("warmed"); err != nil {
			return r, err
		}
		warmed := time.Now()
		if _, err := b.sdkLs(d); err != nil {
			return r, err
		}
		time.Sleep(time.Until(warmed.Add(65 * time.Second)))
	}
	r.threads0, r.rss0 = procStatus(pid, "Threads:"), procStatus(pid, "VmRSS:")
	r.anon0 = procStatus(pid, "RssAnon:")
	d.dumpMemory(1) // after the figures: a dump allocates too
	if sdkWarm > 0 {
		if _, err := io.WriteString(stdin, "go\n"); err != nil {
			return r, err
		}
	}
	if _, r.start, err = phase("started"); err != nil {
		return r, err
	}
	if r.listed, r.list, err = phase("listed"); err != nil {
		return r, err
	}
	r.threadsN, r.rssN = procStatus(pid, "Threads:"), procStatus(pid, "VmRSS:")
	d.dumpMemory(2)
	t0 := time.Now()
	if r.lsListed, err = b.sdkLs(d); err != nil {
		return r, err
	}
	r.ls = time.Since(t0)
	if _, err := io.WriteString(stdin, "go\n"); err != nil {
		return r, err
	}
	if r.killed, r.kill, err = phase("killed"); err != nil {
		return r, err
	}
	killed := time.Now()
	// After: once the daemon's threads are back (or 10 s), and 2 s more
	// for its memory to go back to the system as it would.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if procStatus(pid, "Threads:") <= r.threads0 {
			break
		}
	}
	time.Sleep(2 * time.Second)
	r.threadsE, r.rssE = procStatus(pid, "Threads:"), procStatus(pid, "VmRSS:")
	// And once both daemons have forgotten the exits they keep for late
	// callers (envd 30 s, sandtop's daemon 60 s).
	time.Sleep(time.Until(killed.Add(65 * time.Second)))
	r.rssR, r.anonR = procStatus(pid, "VmRSS:"), procStatus(pid, "RssAnon:")
	if d.dumpMemory(3) != 0 {
		d.printMemory()
	}
	_ = cmd.Wait()
	return r, nil
}

// sdkStream streams mib MiB of zeros to the SDK from a fresh daemon.
func (b *bench) sdkStream(node, sdkdir string, d *sdkDaemon, mib int, r *sdkResult) error {
	pid := d.cmd.Process.Pid
	env := sdkEnv(d, 0)
	// Three runs, the median's time, the SDK's CPU and the
	// daemon's peak RSS over all three.
	var times, cpus []time.Duration
	peak, anon := 0, 0
	for range 3 {
		stop := sampleRSS(pid, &peak, &anon)
		took, cpu, err := streamOnce(node, sdkdir, env, mib<<20)
		stop()
		if err != nil {
			return err
		}
		times, cpus = append(times, took), append(cpus, cpu)
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Slice(cpus, func(i, j int) bool { return cpus[i] < cpus[j] })
	r.stream, r.streamSDKCPU, r.streamRSS, r.streamAnon = p50(times), p50(cpus), peak, anon
	r.loadE = loadAverage()
	return nil
}

// streamOnce runs stream.mjs for n bytes of zeros (env nil: the bench's
// own) and returns the time the script measured around commands.run
// (node's start and the SDK's import left out) and the SDK's CPU.
func streamOnce(node, sdkdir string, env []string, n int) (took, cpu time.Duration, err error) {
	cmd := exec.Command(node, "stream.mjs", strconv.Itoa(n))
	cmd.Dir, cmd.Env = sdkdir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return 0, 0, fmt.Errorf("node stream.mjs: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	var res struct{ Ms float64 }
	if err := json.Unmarshal(out, &res); err != nil || res.Ms <= 0 {
		return 0, 0, fmt.Errorf("node stream.mjs said %q", out)
	}
	return time.Duration(res.Ms * float64(time.Millisecond)), cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), nil
}

// sampleRSS records pid's largest VmRSS into peak, and its largest
// anonymous part (what leaves out the binary's own code pages) into anon,
// until the returned stop is called.
func sampleRSS(pid int, peak, anon *int) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			*peak = max(*peak, procStatus(pid, "VmRSS:"))
			*anon = max(*anon, procStatus(pid, "RssAnon:"))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
