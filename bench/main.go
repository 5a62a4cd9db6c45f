// Command bench measures sandtop as a whole system, each figure beside a
// local reference taken in the same run, and prints a Markdown table of
// ratios (BENCHMARKS.md holds the latest). It builds sandtop, starts a
// private daemon on a unix socket, and drives it through the CLI and the
// TUI the way an operator would:
//
//	go run ./bench                 # the full run: 250, 500 and 1,000 groups
//	go run ./bench -groups 100     # a quick one
//	go run ./bench -only fleet     # the TUI on a fake E2B team (fleet.go)
//	go run ./bench -only sdk -envd-bin ./envd   # E2B's SDK on both daemons (sdk.go)
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/creack/pty"

	"sandtop/backend/shim"
)

func main() {
	// The seam it runs in-process may upload this executable as the
	// supervisor, as sandtop's main does.
	shim.RunIfSubcommand()
	levels := flag.String("groups", "250,500,1000", "running-group counts to measure at, ascending")
	streamMiB := flag.Int("stream-mib", 256, "MiB of zeros streamed through run --wait")
	spawns := flag.Int("spawns", 200, "spawns timed for the spawn figures")
	watch := flag.Duration("watch", 10*time.Second, "how long the TUI watches at each level")
	out := flag.String("o", "", "also write the table to this file")
	flag.StringVar(&only, "only", "", "run only these parts, comma-separated: run, attach, scale, teardown, settled, stream, fleet, compat, sdk (default: all but fleet, compat and sdk)")
	flag.StringVar(&sdkMemory, "sdk-memory", "", "sdk: have sandtop's daemon dump its memory (Go runtime classes, smaps_rollup, heap profile) into this directory before, while and 65 s after the n run, and print the breakdown")
	sdkN := flag.Int("sdk-n", 1000, "sdk: background commands E2B's SDK starts, lists and kills on each daemon")
	flag.IntVar(&sdkWarm, "sdk-warm", 100, "sdk: a smaller crowd the SDK starts, lists and kills first, so that \"before\" is a daemon that has served one (0: none)")
	flag.StringVar(&envdBin, "envd-bin", os.Getenv("SANDTOP_TEST_ENVD"), "compat: E2B's envd binary (scripts/build-envd.sh; run as root); empty: sandtop serve --compat envd stands in")
	fleetLevels := flag.String("fleet", "100,300,1000", "fleet: E2B sandbox counts to measure at")
	flag.IntVar(&fleetOpts.daemons, "fleet-daemons", 4, "fleet: real daemons behind the sandboxes")
	flag.IntVar(&fleetOpts.pausedEvery, "fleet-paused-every", 10, "fleet: every n-th sandbox is paused (0: none)")
	flag.DurationVar(&fleetOpts.idle, "fleet-idle", 60*time.Second, "fleet: the idle window RSS, CPU and requests are measured over")
	flag.DurationVar(&fleetOpts.countsWait, "fleet-wait", 120*time.Second, "fleet: how long to wait for every sandbox's counts")
	flag.StringVar(&fleetOpts.keep, "fleet-keep", "", "fleet: copy each level's TUI debug log and last screen into this directory")
	fleetArgs := flag.String("fleet-args", "--e2b --e2b-metadata fleet=bench", "fleet: the TUI's target flags (every bench sandbox has metadata fleet=bench)")
	flag.Parse()
	var err error
	if fleetOpts.levels, err = parseLevels(*fleetLevels); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -fleet:", err)
		os.Exit(2)
	}
	fleetOpts.tuiArgs = strings.Fields(*fleetArgs)
	if fleetOpts.daemons < 1 || fleetOpts.idle <= 0 || fleetOpts.countsWait <= 0 {
		fmt.Fprintln(os.Stderr, "bench: -fleet-daemons, -fleet-idle and -fleet-wait must be positive")
		os.Exit(2)
	}
	sdkCount = *sdkN
	if err := run(*levels, *streamMiB, *spawns, *watch, *out); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// only lists the parts to run (-only); empty runs them all but fleet and
// compat.
var only string

// sdkCount is the sdk part's number of background commands (-sdk-n).
var sdkCount int

// sdkWarm is the sdk part's warm-up crowd (-sdk-warm).
var sdkWarm int

// fleetOpts are the fleet part's flags.
var fleetOpts fleetOptions

// part says whether the named part of the run was asked for. The fleet
// part (minutes per level, and tmux), the compat part (a stock envd and a
// thousand more groups) and the sdk part (node, and a thousand processes
// per daemon) run only when named.
func part(name string) bool {
	if only == "" {
		return name != "fleet" && name != "compat" && name != "sdk"
	}
	for _, p := range strings.Split(only, ",") {
		if strings.TrimSpace(p) == name {
			return true
		}
	}
	return false
}

// row is one line of the table.
type row struct{ what, sandtop, reference, ratio, target string }

type bench struct {
	dir, bin, sock string
	daemon         *exec.Cmd
	rows           []row
}

// parseLevels reads a comma-separated list of positive counts.
func parseLevels(list string) ([]int, error) {
	var levels []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("bad count list %q: want positive numbers, comma-separated", list)
		}
		levels = append(levels, n)
	}
	return levels, nil
}

func run(levelList string, streamMiB, spawns int, watch time.Duration, out string) error {
	levels, err := parseLevels(levelList)
	if err != nil {
		return fmt.Errorf("-groups: %w", err)
	}
	dir, err := os.MkdirTemp("", "sandtop-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{dir: dir, bin: filepath.Join(dir, "bin", "sandtop"), sock: filepath.Join(dir, "d.sock")}
	fmt.Fprintln(os.Stderr, "building sandtop")
	// Static, as README says to install it: a binary without cgo skips
	// the dynamic loader at every start of the CLI and of each shim.
	build := exec.Command("go", "build", "-o", b.bin, ".")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %v: %s", err, out)
	}
	if part("run") || part("attach") || part("scale") || part("teardown") || part("settled") || part("stream") {
		if err := b.startDaemon(); err != nil {
			return err
		}
		defer b.stopDaemon()
	}

	if part("run") {
		if err := b.spawnFigures(spawns); err != nil {
			return err
		}
		if err := b.seamFigures(spawns); err != nil {
			return err
		}
	}
	if part("attach") {
		if err := b.attachFigures(spawns); err != nil {
			return err
		}
	}
	var pgids []int
	if part("scale") || part("teardown") || part("settled") {
		for _, n := range levels {
			more, err := b.spawnSleepers(n - len(pgids))
			if err != nil {
				return err
			}
			pgids = append(pgids, more...)
			if part("scale") {
				if err := b.scaleFigures(n, watch); err != nil {
					return err
				}
			}
		}
	}
	if part("teardown") || part("settled") {
		if err := b.teardownFigures(pgids); err != nil {
			return err
		}
	}
	if part("settled") {
		if err := b.settledFigures(len(pgids)); err != nil {
			return err
		}
	}
	if part("compat") {
		if err := b.compatFigures(levels[len(levels)-1]); err != nil {
			return err
		}
	}
	if part("stream") {
		if err := b.streamFigures(streamMiB); err != nil {
			return err
		}
		if err := b.daemonBenchFigures(); err != nil {
			return err
		}
		if err := b.sdkFigures(streamMiB); err != nil {
			return err
		}
	}
	if part("sdk") {
		if err := b.sdkCompare(streamMiB, sdkCount); err != nil {
			return err
		}
	}
	if part("fleet") {
		if err := b.fleetFigures(fleetOpts); err != nil {
			return err
		}
	}
	table := b.table()
	fmt.Print(table)
	if out != "" {
		return os.WriteFile(out, []byte(table), 0o644)
	}
	return nil
}

func (b *bench) startDaemon() error {
	b.daemon = exec.Command(b.bin, "serve", "--listen", "unix:"+b.sock, "--state-dir", filepath.Join(b.dir, "state"), "--kill-on-exit")
	b.daemon.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}
	logf, err := os.Create(filepath.Join(b.dir, "daemon.out"))
	if err != nil {
		return err
	}
	b.daemon.Stdout, b.daemon.Stderr = logf, logf
	if err := b.daemon.Start(); err != nil {
		return err
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := b.cli("ls"); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(b.dir, "daemon.out"))
			_, lsErr := b.cli("ls")
			b.stopDaemon() // it may run while its socket does not answer
			return fmt.Errorf("the daemon did not answer on %s (%v); its output: %s", b.sock, lsErr, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (b *bench) stopDaemon() {
	_ = b.daemon.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = b.daemon.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = b.daemon.Process.Kill()
	}
}

// cli runs sandtop against the private daemon and returns its stdout.
func (b *bench) cli(args ...string) ([]byte, error) {
	cmd := exec.Command(b.bin, append(append([]string{}, args[:1]...), append([]string{"--socket", b.sock}, args[1:]...)...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), fmt.Errorf("sandtop %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.Bytes(), nil
}

// timed runs f n times and returns the durations, sorted.
func timed(n int, f func() error) ([]time.Duration, error) {
	ds := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		ds = append(ds, time.Since(start))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds, nil
}

func p50(ds []time.Duration) time.Duration { return ds[len(ds)/2] }

func (b *bench) add(what, sandtop, reference, ratio, target string) {
	b.rows = append(b.rows, row{what, sandtop, reference, ratio, target})
	fmt.Fprintf(os.Stderr, "%-58s %14s %14s %8s\n", what, sandtop, reference, ratio)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }

func times(a, b time.Duration) string { return fmt.Sprintf("%.2f×", float64(a)/float64(b)) }

// spawnFigures: the whole `sandtop run` command, beside a local fork and
// exec of the same program.
func (b *bench) spawnFigures(n int) error {
	run, err := timed(n, func() error {
		_, err := b.cli("run", "--", "true")
		return err
	})
	if err != nil {
		return err
	}
	local, err := timed(n, func() error { return exec.Command("true").Run() })
	if err != nil {
		return err
	}
	b.add("`sandtop run -- true` (the whole CLI), p50", ms(p50(run)), ms(p50(local)), times(p50(run), p50(local)), "< 15 ms")
	return nil
}

// spawnSleepers starts n idle groups, 8 CLI calls at a time.
func (b *bench) spawnSleepers(n int) ([]int, error) {
	var mu sync.Mutex
	var pgids []int
	var firstErr error
	work := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				out, err := b.cli("run", "--tag", "bench", "--", "sleep", "3600")
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				if pgid := parsePgid(out); pgid > 0 {
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
	if firstErr == nil && len(pgids) != n {
		firstErr = fmt.Errorf("started %d of %d groups", len(pgids), n)
	}
	return pgids, firstErr
}

// parsePgid takes the pgid from run's "pid N pgid N" answer.
func parsePgid(out []byte) int {
	f := strings.Fields(string(out))
	for i := 0; i+1 < len(f); i++ {
		if f[i] == "pgid" {
			n, _ := strconv.Atoi(f[i+1])
			return n
		}
	}
	return 0
}

// scaleFigures: the daemon's memory and threads with n groups, its CPU and
// the TUI's while one TUI watches, and ls beside ps.
func (b *bench) scaleFigures(n int, watch time.Duration) error {
	pid := b.daemon.Process.Pid
	rss, threads := procStatus(pid, "VmRSS:"), procStatus(pid, "Threads:")
	b.add(fmt.Sprintf("daemon with %d running groups: RSS", n), fmt.Sprintf("%.1f MiB", float64(rss)/1024), "—", "", "< 100 MiB at 1,000")
	b.add(fmt.Sprintf("daemon with %d running groups: OS threads", n), strconv.Itoa(threads), "—", "", "< 40 at 1,000")

	daemonCPU, tuiCPU, err := b.watchCPU(watch)
	if err != nil {
		return err
	}
	b.add(fmt.Sprintf("%d groups, one TUI watching: daemon CPU", n), pct(daemonCPU), "—", "", "< 3% of a core")
	b.add(fmt.Sprintf("%d groups, one TUI watching: the TUI's CPU", n), pct(tuiCPU), "—", "", "< 2% of a core")

	size, err := b.lsFigure(fmt.Sprintf("`ls -o json`, %d running groups", n), "< 2× ps")
	if err != nil {
		return err
	}
	b.add(fmt.Sprintf("`ls -o json`, %d running groups: size", n), fmt.Sprintf("%.2f MB", float64(size)/1e6), "—", "", "< 1 MB at 1,000")
	return nil
}

// lsFigure times `ls -o json` beside `ps -e` and returns the JSON's size.
func (b *bench) lsFigure(what, target string) (int, error) {
	var size int
	lsTimes, err := timed(5, func() error {
		out, err := b.cli("ls", "-o", "json")
		size = len(out)
		return err
	})
	if err != nil {
		return 0, err
	}
	psTimes, err := timed(5, func() error { return exec.Command("ps", "-e").Run() })
	if err != nil {
		return 0, err
	}
	b.add(what, ms(p50(lsTimes)), ms(p50(psTimes))+" (ps -e)", times(p50(lsTimes), p50(psTimes)), target)
	return size, nil
}

// watchCPU runs the TUI on a pseudo-terminal for d and returns the CPU the
// daemon and the TUI used meanwhile, as fractions of a core.
func (b *bench) watchCPU(d time.Duration) (float64, float64, error) {
	cmd := exec.Command(b.bin, "--socket", b.sock)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir, "TERM=xterm-256color"}
	f, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 50, Cols: 200})
	if err != nil {
		return 0, 0, err
	}
	var drawn sync.WaitGroup
	drawn.Add(1)
	go func() { defer drawn.Done(); _, _ = io.Copy(io.Discard, f) }()
	defer func() {
		_, _ = f.Write([]byte("q"))
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		f.Close()
		drawn.Wait()
	}()
	time.Sleep(3 * time.Second) // let it load and draw the first screen
	d0, t0, at := cpuTicks(b.daemon.Process.Pid), cpuTicks(cmd.Process.Pid), time.Now()
	time.Sleep(d)
	d1, t1, took := cpuTicks(b.daemon.Process.Pid), cpuTicks(cmd.Process.Pid), time.Since(at)
	if err := syscall.Kill(cmd.Process.Pid, 0); err != nil || t1 == 0 {
		return 0, 0, fmt.Errorf("the TUI did not run through the measurement (%v)", err)
	}
	const hz = 100 // USER_HZ
	secs := took.Seconds()
	return float64(d1-d0) / hz / secs, float64(t1-t0) / hz / secs, nil
}

func pct(f float64) string { return fmt.Sprintf("%.2f%%", f*100) }

// teardownFigures: kill every group, 4 CLI teardowns at a time, beside a
// bare SIGTERM of each group.
func (b *bench) teardownFigures(pgids []int) error {
	start := time.Now()
	work := make(chan int)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pgid := range work {
				if _, err := b.cli("kill", "--grace", "1s", strconv.Itoa(pgid)); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					mu.Unlock()
				}
			}
		}()
	}
	for _, p := range pgids {
		work <- p
	}
	close(work)
	wg.Wait()
	took := time.Since(start)
	if firstErr != nil {
		return firstErr
	}
	// The reference: the signals alone, on as many fresh sleeps.
	var cmds []*exec.Cmd
	for range len(pgids) {
		c := exec.Command("sleep", "3600")
		c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := c.Start(); err != nil {
			return err
		}
		cmds = append(cmds, c)
	}
	refStart := time.Now()
	for _, c := range cmds {
		_ = syscall.Kill(-c.Process.Pid, syscall.SIGTERM)
	}
	for _, c := range cmds {
		_ = c.Wait()
	}
	ref := time.Since(refStart)
	b.add(fmt.Sprintf("%d teardowns (`sandtop kill`), 4 at a time", len(pgids)), fmt.Sprintf("%.2f s", took.Seconds()),
		fmt.Sprintf("%.2f s (kill -TERM, wait)", ref.Seconds()), times(took, ref), "< 10 s")
	return nil
}

// settledFigures: ls once every group has ended.
func (b *bench) settledFigures(n int) error {
	_, err := b.lsFigure(fmt.Sprintf("`ls -o json`, %d settled groups", n), "< 200 ms")
	return err
}

// streamFigures: zeros through `run --wait` to /dev/null, beside a local
// pipe of the same bytes.
func (b *bench) streamFigures(mib int) error {
	n := strconv.Itoa(mib << 20)
	// Alternated, so that a burst of other load on a shared machine slows
	// both sides rather than one.
	var sand, local []time.Duration
	for range 7 {
		s, err := timed(1, func() error { return b.runWait("--socket", b.sock, n) })
		if err != nil {
			return err
		}
		l, err := timed(1, func() error {
			return exec.Command("bash", "-c", "head -c "+n+" /dev/zero | cat >/dev/null").Run()
		})
		if err != nil {
			return err
		}
		sand, local = append(sand, s...), append(local, l...)
	}
	slices.Sort(sand)
	slices.Sort(local)
	b.add(fmt.Sprintf("`run --wait` of %d MiB of zeros to /dev/null", mib), ms(p50(sand)), ms(p50(local))+" (head piped to cat)",
		fmt.Sprintf("%.0f%% of the pipe", 100*float64(p50(local))/float64(p50(sand))), "≥ 25% of the pipe")
	return nil
}

// runWait runs `sandtop run --wait -- head -c n /dev/zero` against the
// daemon that flag (--socket, --envd) names, its output to /dev/null.
func (b *bench) runWait(flag, target, n string) error {
	cmd := exec.Command(b.bin, "run", flag, target, "--wait", "--", "head", "-c", n, "/dev/zero")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	cmd.Stdout = devnull
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("sandtop run --wait: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// daemonBenchFigures runs the daemon's in-process stream benchmark
// (BenchmarkStdoutThroughput: a Start stream read by a client in the same
// process, beside a local pipe of the same bytes) and reports each client
// setup as a share of the pipe. The default client is what sandtop uses;
// the JSON ones are what E2B's SDKs ask for.
func (b *bench) daemonBenchFigures() error {
	fmt.Fprintln(os.Stderr, "running BenchmarkStdoutThroughput")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkStdoutThroughput$", "-benchtime", "5x", "-count", "3", "./backend/daemon/")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("go test -bench StdoutThroughput: %v: %s", err, out)
	}
	speeds := map[string][]float64{} // sub-benchmark: MB/s of each run
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || !strings.HasPrefix(f[0], "BenchmarkStdoutThroughput/") || f[len(f)-1] != "MB/s" {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkStdoutThroughput/")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		v, err := strconv.ParseFloat(f[len(f)-2], 64)
		if err != nil {
			continue
		}
		if _, ok := speeds[name]; !ok {
			names = append(names, name)
		}
		speeds[name] = append(speeds[name], v)
	}
	pipe := median(speeds["pipe"])
	if pipe == 0 {
		return fmt.Errorf("BenchmarkStdoutThroughput reported no pipe figure: %s", out)
	}
	for _, name := range names {
		if name == "pipe" {
			continue
		}
		v, target := median(speeds[name]), ""
		if name == "daemon-default-unix" {
			target = "≥ 40% of the pipe"
		}
		b.add(fmt.Sprintf("`BenchmarkStdoutThroughput`, %s (in-process, 64 MiB), median of 3", name),
			fmt.Sprintf("%.0f MB/s", v), fmt.Sprintf("%.0f MB/s (pipe)", pipe), fmt.Sprintf("%.0f%% of the pipe", 100*v/pipe), target)
	}
	return nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// sdkPort is where E2B's SDK in debug mode finds envd (sdktest/helpers.mjs).
const sdkPort = "127.0.0.1:49983"

// sdkFigures: E2B's JS SDK (sdktest/stream.mjs, commands.run with
// onStdout) and `sandtop run --wait` streaming the same zeros from one
// daemon, which listens where the SDK's debug mode looks for envd. Skipped,
// with a row that says why, without node or sdktest's node_modules.
func (b *bench) sdkFigures(mib int) error {
	what := fmt.Sprintf("E2B JS SDK `commands.run` of %d MiB of zeros, same daemon (TCP)", mib)
	skip := func(why string) error {
		b.add(what, "skipped", why, "", "sandtop ≥ 10× faster")
		return nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return skip("no node in PATH")
	}
	sdkdir, err := filepath.Abs("sdktest")
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(sdkdir, "node_modules", "e2b")); err != nil {
		return skip("no sdktest/node_modules (cd sdktest && npm ci)")
	}
	if c, err := net.DialTimeout("tcp", sdkPort, time.Second); err == nil {
		c.Close()
		return skip("something already listens on " + sdkPort)
	}
	d := exec.Command(b.bin, "serve", "--listen", sdkPort, "--state-dir", filepath.Join(b.dir, "sdk-state"), "--kill-on-exit")
	d.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir}
	if err := d.Start(); err != nil {
		return err
	}
	defer func() {
		_ = d.Process.Signal(syscall.SIGTERM)
		_ = d.Wait()
	}()
	url := "http://" + sdkPort
	deadline := time.Now().Add(20 * time.Second)
	for {
		ls := exec.Command(b.bin, "ls", "--envd", url)
		ls.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir}
		if ls.Run() == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the SDK's daemon did not answer on %s", sdkPort)
		}
		time.Sleep(50 * time.Millisecond)
	}
	n := strconv.Itoa(mib << 20)
	sand, err := timed(3, func() error { return b.runWait("--envd", url, n) })
	if err != nil {
		return err
	}
	// The SDK's time is what the script measures around commands.run:
	// node's start and the SDK's import are left out, where sandtop's
	// figure is the whole command.
	var sdk []time.Duration
	for range 3 {
		took, _, err := streamOnce(node, sdkdir, nil, mib<<20)
		if err != nil {
			return err
		}
		sdk = append(sdk, took)
	}
	sort.Slice(sdk, func(i, j int) bool { return sdk[i] < sdk[j] })
	b.add(what, ms(p50(sand))+" (`run --wait`)", ms(p50(sdk))+" (the SDK's `commands.run`)",
		fmt.Sprintf("sandtop %.1f× faster", float64(p50(sdk))/float64(p50(sand))), "sandtop ≥ 10× faster")
	return nil
}

func (b *bench) table() string {
	var s strings.Builder
	host, _ := os.Hostname()
	fmt.Fprintf(&s, "Measured %s on %s: %d CPUs, %s, %s/%s.\n\n", time.Now().UTC().Format("2006-01-02"), host, runtime.NumCPU(), kernel(), runtime.GOOS, runtime.GOARCH)
	s.WriteString("| what | sandtop | reference, same run | ratio | target |\n|---|---|---|---|---|\n")
	for _, r := range b.rows {
		fmt.Fprintf(&s, "| %s | %s | %s | %s | %s |\n", r.what, r.sandtop, r.reference, r.ratio, r.target)
	}
	return s.String()
}

func kernel() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown kernel"
	}
	return "Linux " + strings.TrimSpace(string(b))
}

// procStatus reads a number from /proc/PID/status (kB for sizes).
func procStatus(pid int, key string) int {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			f := strings.Fields(rest)
			if len(f) > 0 {
				n, _ := strconv.Atoi(f[0])
				return n
			}
		}
	}
	return 0
}

// cpuTicks is a process's user plus system time in clock ticks.
func cpuTicks(pid int) int64 {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 {
		f := strings.Fields(s[i+1:])
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			k, _ := strconv.ParseInt(f[12], 10, 64)
			return u + k
		}
	}
	return 0
}
