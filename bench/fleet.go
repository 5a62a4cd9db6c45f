package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The fleet figures (-only fleet): one TUI (`sandtop --e2b`, the shipped
// binary inside tmux at 160x48) on a fake E2B team of N sandboxes backed
// by a few real daemons. Measured: how long until every sandbox's counts
// are on screen (from the TUI's debug log), then, over an idle window, the
// TUI's RSS and CPU, its open sockets, and the control-plane requests per
// second by route.

// fleetOptions are the -fleet* flags.
type fleetOptions struct {
	levels      []int
	daemons     int
	pausedEvery int
	idle        time.Duration
	countsWait  time.Duration
	tuiArgs     []string
	keep        string // where to copy the TUI's logs and screens ("": nowhere)
}

// fleetTUICols and fleetTUIRows are the TUI's window.
const fleetTUICols, fleetTUIRows = 160, 48

func (b *bench) fleetFigures(o fleetOptions) error {
	if _, err := exec.LookPath("tmux"); err != nil {
		b.add("fleet: the TUI on an E2B team", "skipped", "no tmux in PATH", "", "")
		return nil
	}
	dir := filepath.Join(b.dir, "fleet")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "fleet: starting %d daemons\n", o.daemons)
	// The daemons are in the bench's process group: Ctrl-C reaches them,
	// and Pdeathsig covers the bench's death.
	var daemons []*exec.Cmd
	undo := onInterrupt(func() {
		// The daemons got the signal too; once they have ended their
		// groups, their state can go.
		deadline := time.Now().Add(10 * time.Second)
		for _, d := range daemons {
			for time.Now().Before(deadline) && syscall.Kill(d.Process.Pid, 0) == nil && !zombie(d.Process.Pid) {
				time.Sleep(20 * time.Millisecond)
			}
		}
		_ = os.RemoveAll(b.dir)
	})
	defer undo()
	started, socks, err := b.startFleetDaemons(dir, o.daemons)
	interruptMu.Lock() // the interrupt handler reads daemons under it
	daemons = started
	interruptMu.Unlock()
	defer stopFleetDaemons(started)
	if err != nil {
		return err
	}
	for _, n := range o.levels {
		if err := b.fleetLevel(dir, n, socks, o); err != nil {
			return err
		}
	}
	return nil
}

func (b *bench) fleetLevel(dir string, n int, socks []string, o fleetOptions) error {
	fl, err := newFleet(n, o.pausedEvery, socks)
	if err != nil {
		return err
	}
	defer fl.close()
	label := fmt.Sprintf("fleet of %d (%d paused, %d daemons)", n, fl.paused, len(socks))
	fmt.Fprintf(os.Stderr, "%s: opening the TUI\n", label)
	loadStart := loadAverage()

	logFile := filepath.Join(dir, fmt.Sprintf("tui-%d.log", n))
	home := filepath.Join(dir, fmt.Sprintf("home-%d", n))
	if err := os.MkdirAll(home, 0o700); err != nil {
		return err
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_CONFIG_HOME=" + home, "XDG_STATE_HOME=" + home,
		"XDG_RUNTIME_DIR=" + home, "TERM=screen-256color", "LANG=C.UTF-8",
		"E2B_API_KEY=" + fleetKey, "E2B_API_URL=" + fl.plane.URL, "E2B_DOMAIN=sandbox.test", "E2B_SANDBOX_URL=" + fl.proxyURL}
	// The sandbox user is this one, as the daemons run as it; its home is
	// the level's: E2B's /home/user does not exist here.
	me, err := user.Current()
	if err != nil {
		return err
	}
	layout := []string{"--user", me.Username, "--agent-workspace", home, "--runtime-root", filepath.Join(home, ".local/state/sandtop")}
	argv := append(append(append([]string{b.bin}, o.tuiArgs...), layout...), "--log-file", logFile)
	tui, err := startTmuxTUI(filepath.Join(dir, fmt.Sprintf("tmux-%d", n)), env, argv)
	if err != nil {
		return err
	}
	defer tui.stop()

	// Until every count is shown (or the TUI never says so).
	shown, shownNote, firstScreen := waitCountsShown(tui, logFile, o.countsWait)
	if dead, screen := tui.dead(); dead {
		return fmt.Errorf("%s: the TUI exited; its screen:\n%s", label, screen)
	}
	fmt.Fprintf(os.Stderr, "%s: counts: %s; idle for %s\n", label, shownNote, o.idle)

	// The idle window.
	pid := tui.pid
	plane0, total0 := fl.plane.Counts(), fl.plane.Total()
	_, envd0, _, _ := fl.router.counts()
	cpu0, at := cpuTicks(pid), time.Now()
	var peakSocks socketCount
	for time.Since(at) < o.idle {
		time.Sleep(min(2*time.Second, o.idle-time.Since(at)))
		if s := socketsOf(pid, port(fl.proxyURL), port(fl.plane.URL)); s.total() > peakSocks.total() {
			peakSocks = s
		}
	}
	cpu1, secs := cpuTicks(pid), time.Since(at).Seconds()
	plane1, total1 := fl.plane.Counts(), fl.plane.Total()
	reached, envd1, pausedDialled, unknown := fl.router.counts()
	socks1 := socketsOf(pid, port(fl.proxyURL), port(fl.plane.URL))
	rss, hwm := procStatus(pid, "VmRSS:"), procStatus(pid, "VmHWM:")
	if dead, screen := tui.dead(); dead || cpu1 == 0 {
		return fmt.Errorf("%s: the TUI did not run through the idle window; its screen:\n%s", label, screen)
	}
	// What the operator saw, on stderr beside the progress lines.
	screen := tui.capture()
	fmt.Fprintf(os.Stderr, "%s: the TUI's screen at the end:\n%s\n", label, strings.TrimRight(screen, "\n"))
	if o.keep != "" {
		if err := keepFiles(o.keep, n, logFile, screen); err != nil {
			return err
		}
	}
	loadEnd := loadAverage()
	const hz = 100 // USER_HZ

	first := "not drawn"
	if firstScreen > 0 {
		first = fmt.Sprintf("%.1f s", firstScreen.Seconds())
	}
	b.add(label+": time until the TUI's first screen", first, "from its start, polled every 250 ms", "", "")
	b.add(label+": time until every sandbox's counts are shown", shown, shownNote, "", "≤ 60 s at 1,000")
	b.add(label+", idle TUI: RSS", fmt.Sprintf("%.1f MiB", float64(rss)/1024), fmt.Sprintf("peak %.1f MiB", float64(hwm)/1024), "", "< 150 MiB at 1,000")
	b.add(label+fmt.Sprintf(", idle TUI: CPU over %.0f s", secs), pct(float64(cpu1-cpu0)/hz/secs), "—", "", "< 3% of a core at 1,000")
	b.add(label+", idle TUI: open connections (TCP and unix sockets)", strconv.Itoa(socks1.total()),
		socks1.String()+fmt.Sprintf("; peak %d", max(peakSocks.total(), socks1.total())), "", "≤ 64 at 1,000")
	b.add(label+", idle TUI: control-plane requests/s", fmt.Sprintf("%.2f/s", float64(total1-total0)/secs),
		byRoute(plane0, plane1, secs)+fmt.Sprintf("; %d before the idle window", total0), "", "≤ 1/s at 1,000")
	b.add(label+": sandboxes whose envd was reached", fmt.Sprintf("%d of %d running", reached, n-fl.paused),
		fmt.Sprintf("%.1f envd requests/s idle; %d to paused sandboxes, %d to unknown ones", float64(envd1-envd0)/secs, pausedDialled, unknown),
		"", "paused: never dialled")
	b.add(label+": load average (1 min), start / end", loadStart+" / "+loadEnd, "2 CPUs", "", "")
	return nil
}

// keepFiles copies level n's TUI log and last screen into dir.
func keepFiles(dir string, n int, logFile, screen string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	log, err := os.ReadFile(logFile)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("tui-%d.log", n)), log, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, fmt.Sprintf("screen-%d.txt", n)), []byte(screen), 0o644)
}

// countsLine is what the TUI logs each time more sandboxes have their
// counts on screen.
var countsLine = regexp.MustCompile(`counts shown for (\d+) of (\d+) sandboxes`)

// logTime is slog's time attribute at the start of a line.
var logTime = regexp.MustCompile(`^time=(\S+)`)

// waitCountsShown polls the TUI's log until it says every sandbox's counts
// are shown, or wait passes, or (when the TUI never logs the line) a
// settling time passes. It returns the figure and a note on it, and how
// long the TUI took to draw its first screen (0: it did not).
func waitCountsShown(tui *tmuxTUI, logFile string, wait time.Duration) (figure, note string, firstScreen time.Duration) {
	// When the TUI logs nothing: its first screen, then this long to load.
	const settle = 15 * time.Second
	start := tui.started
	var drawn time.Time
	defer func() {
		if !drawn.IsZero() {
			firstScreen = drawn.Sub(start)
		}
	}()
	lastK, lastN := -1, 0
	for {
		if drawn.IsZero() && strings.TrimSpace(tui.capture()) != "" {
			drawn = time.Now()
		}
		started, k, n, at := scanCountsLog(logFile)
		if n > 0 && k >= n {
			from := started
			if from.IsZero() || at.IsZero() {
				from, at = start, time.Now()
			}
			return fmt.Sprintf("%.1f s", at.Sub(from).Seconds()), fmt.Sprintf("all %d shown (from the TUI's start, its log)", n), 0
		}
		if k != lastK || n != lastN {
			lastK, lastN = k, n
		}
		waited := time.Since(start)
		if dead, _ := tui.dead(); dead {
			return "n/a", "the TUI exited", 0
		}
		if (lastN == 0 && !drawn.IsZero() && time.Since(drawn) > settle) || waited > wait {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if lastN == 0 {
		return "n/a", "the TUI does not log \"counts shown\"", 0
	}
	return fmt.Sprintf("> %.0f s", wait.Seconds()), fmt.Sprintf("%d of %d shown after %.0f s", lastK, lastN, wait.Seconds()), 0
}

// scanCountsLog reads the TUI's debug log: when it started, and the last
// "counts shown for K of N" line with its time.
func scanCountsLog(path string) (started time.Time, k, n int, at time.Time) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var t time.Time
		if m := logTime.FindStringSubmatch(line); m != nil {
			t, _ = time.Parse(time.RFC3339Nano, m[1])
		}
		if started.IsZero() && strings.Contains(line, "sandtop starting") {
			started = t
		}
		if m := countsLine.FindStringSubmatch(line); m != nil {
			k, _ = strconv.Atoi(m[1])
			n, _ = strconv.Atoi(m[2])
			at = t
		}
	}
	return
}

// byRoute is the requests per second of each route between two counts,
// busiest first.
func byRoute(before, after map[string]int, secs float64) string {
	type rc struct {
		route string
		n     int
	}
	var rs []rc
	for r, n := range after {
		if d := n - before[r]; d > 0 {
			rs = append(rs, rc{r, d})
		}
	}
	if len(rs) == 0 {
		return "none"
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].n > rs[j].n || rs[i].n == rs[j].n && rs[i].route < rs[j].route })
	var parts []string
	for _, r := range rs {
		parts = append(parts, fmt.Sprintf("`%s` %.2f/s", r.route, float64(r.n)/secs))
	}
	return strings.Join(parts, ", ")
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	if f := strings.Fields(string(b)); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// socketCount is a process's sockets by what they are connected to.
type socketCount struct{ envd, plane, otherTCP, unix int }

func (s socketCount) total() int { return s.envd + s.plane + s.otherTCP + s.unix }

func (s socketCount) String() string {
	return fmt.Sprintf("%d to envd (the edge), %d to the control plane, %d other TCP, %d unix", s.envd, s.plane, s.otherTCP, s.unix)
}

// socketsOf counts pid's open sockets from /proc/PID/fd, told apart by
// /proc/PID/net/{tcp,tcp6,unix}: TCP ones by remote port (listening ones
// left out), unix ones all together.
func socketsOf(pid, envdPort, planePort int) socketCount {
	inodes := map[string]bool{}
	fds, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	for _, fd := range fds {
		if l, err := os.Readlink(fd); err == nil {
			if in, ok := strings.CutPrefix(l, "socket:["); ok {
				inodes[strings.TrimSuffix(in, "]")] = true
			}
		}
	}
	var c socketCount
	for _, name := range []string{"tcp", "tcp6"} {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/%s", pid, name))
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !inodes[f[9]] || f[3] == "0A" { // 0A: LISTEN
				continue
			}
			_, hexPort, _ := strings.Cut(f[2], ":")
			p, _ := strconv.ParseInt(hexPort, 16, 32)
			switch int(p) {
			case envdPort:
				c.envd++
			case planePort:
				c.plane++
			default:
				c.otherTCP++
			}
		}
	}
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/net/unix", pid))
	for _, line := range strings.Split(string(b), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 7 && inodes[f[6]] {
			c.unix++
		}
	}
	return c
}

// tmuxTUI is the TUI running in a private tmux server, which runs in the
// foreground as the bench's child and so dies with it.
type tmuxTUI struct {
	sock    string
	server  *exec.Cmd
	pid     int
	exe     string
	started time.Time // just before tmux started it
	undo    func()
}

func startTmuxTUI(dir string, env, argv []string) (*tmuxTUI, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "tmux.conf")
	// No status line: the pane is the whole 160x48. A TUI that exits
	// leaves its last screen to read.
	if err := os.WriteFile(conf, []byte("set -g status off\nset -g remain-on-exit on\n"), 0o600); err != nil {
		return nil, err
	}
	t := &tmuxTUI{sock: filepath.Join(dir, "sock")}
	t.server = exec.Command("tmux", "-D", "-S", t.sock, "-f", conf)
	t.server.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "TERM=screen-256color"}
	t.server.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := t.server.Start(); err != nil {
		return nil, fmt.Errorf("tmux: %w", err)
	}
	t.undo = onInterrupt(t.kill)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(t.sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.stop()
			return nil, fmt.Errorf("tmux -D did not create %s", t.sock)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.started = time.Now()
	args := []string{"new-session", "-d", "-s", "fleet", "-x", strconv.Itoa(fleetTUICols), "-y", strconv.Itoa(fleetTUIRows), "--", "env", "-i"}
	if _, err := t.tmux(append(append(args, env...), argv...)...); err != nil {
		t.stop()
		return nil, err
	}
	// env execs the TUI: the pane's process becomes it.
	for {
		out, err := t.tmux("display-message", "-p", "-t", "fleet", "#{pane_pid}")
		if err == nil {
			pid, _ := strconv.Atoi(strings.TrimSpace(out))
			if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid)); pid > 0 && exe == argv[0] {
				t.pid, t.exe = pid, exe
				return t, nil
			}
		}
		if time.Now().After(deadline) {
			screen := t.capture()
			t.stop()
			return nil, fmt.Errorf("the TUI did not start in tmux (%v); its screen:\n%s", err, screen)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (t *tmuxTUI) tmux(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-S", t.sock}, args...)...)
	cmd.Env = t.server.Env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), fmt.Errorf("tmux %s: %v: %s", args[0], err, strings.TrimSpace(stderr.String()))
	}
	return string(out), nil
}

// capture is the pane's screen as text.
func (t *tmuxTUI) capture() string {
	out, _ := t.tmux("capture-pane", "-p", "-t", "fleet")
	return out
}

// dead reports whether the TUI has exited, with its last screen.
func (t *tmuxTUI) dead() (bool, string) {
	out, err := t.tmux("display-message", "-p", "-t", "fleet", "#{pane_dead}")
	if err != nil || strings.TrimSpace(out) == "1" {
		return true, t.capture()
	}
	return false, ""
}

// stop quits the TUI (q), then ends the tmux server and whatever still
// runs in it.
func (t *tmuxTUI) stop() {
	if t.pid > 0 {
		_, _ = t.tmux("send-keys", "-t", "fleet", "q")
		deadline := time.Now().Add(5 * time.Second)
		for time.Now().Before(deadline) && syscall.Kill(t.pid, 0) == nil && !zombie(t.pid) {
			time.Sleep(50 * time.Millisecond)
		}
	}
	_, _ = t.tmux("kill-server")
	t.kill()
	if t.undo != nil {
		t.undo()
	}
}

// kill ends the server's process group (the server, and the TUI should it
// outlive kill-server), then reaps the server.
func (t *tmuxTUI) kill() {
	if t.server == nil || t.server.Process == nil {
		return
	}
	if exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", t.pid)); t.pid > 1 && exe != "" && exe == t.exe {
		_ = syscall.Kill(t.pid, syscall.SIGKILL)
	}
	if pg := t.server.Process.Pid; pg > 1 {
		_ = syscall.Kill(-pg, syscall.SIGKILL)
	}
	_ = t.server.Wait()
	t.server.Process = nil
}

func zombie(pid int) bool {
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] == 'Z'
	}
	return true
}

// Interrupts: what the bench started outside its own process group dies
// with it on Ctrl-C or SIGTERM, and its temporary files go.
var (
	interruptMu    sync.Mutex
	interruptFuncs []func() // nil where forgotten
	interruptOnce  sync.Once
)

// onInterrupt runs f if the bench is interrupted, the latest registered
// first; the returned func forgets f.
func onInterrupt(f func()) func() {
	interruptOnce.Do(func() {
		ch := make(chan os.Signal, 1)
		signal.Notify(ch, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
		go func() {
			s := <-ch
			interruptMu.Lock()
			for i := len(interruptFuncs) - 1; i >= 0; i-- {
				if f := interruptFuncs[i]; f != nil {
					f()
				}
			}
			interruptMu.Unlock()
			fmt.Fprintln(os.Stderr, "bench: interrupted by", s)
			os.Exit(130)
		}()
	})
	interruptMu.Lock()
	defer interruptMu.Unlock()
	id := len(interruptFuncs)
	interruptFuncs = append(interruptFuncs, f)
	return func() {
		interruptMu.Lock()
		defer interruptMu.Unlock()
		interruptFuncs[id] = nil
	}
}
