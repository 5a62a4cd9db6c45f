package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"sandtop/backend/e2b/e2bfake"
)

// The fleet's world: E2B's control plane (e2bfake) listing n sandboxes,
// a few real daemons behind them, and a routing proxy in front of the
// daemons that plays E2B's edge. The TUI reaches every sandbox through
// E2B_SANDBOX_URL, the proxy, which picks the daemon by the E2b-Sandbox-Id
// header each envd request carries, and counts the traffic per sandbox.

// fleetKey is the fake control plane's API key.
const fleetKey = "e2b_00000000000000000000000000000000"

// fleet is one fleet of n sandboxes, every pausedEvery-th one paused.
type fleet struct {
	n, paused int
	daemons   []*exec.Cmd
	socks     []string
	plane     *e2bfake.Fake
	router    *envdRouter
	proxy     *http.Server
	proxyURL  string
	ids       []string
}

// fleetID names sandbox i as E2B would a sandbox: lower-case letters and
// digits.
func fleetID(i int) string { return fmt.Sprintf("ifleet%05d", i) }

// startDaemons starts d daemons on unix sockets under dir, each with a few
// groups and terminals, through the CLI as an operator would start them.
// They stop (killing their groups) when the bench stops, even when it is
// killed: Pdeathsig sends them the SIGTERM that --kill-on-exit acts on.
func (b *bench) startFleetDaemons(dir string, d int) ([]*exec.Cmd, []string, error) {
	var cmds []*exec.Cmd
	var socks []string
	for i := range d {
		sock := filepath.Join(dir, fmt.Sprintf("d%d.sock", i))
		cmd := exec.Command(b.bin, "serve", "--listen", "unix:"+sock, "--state-dir", filepath.Join(dir, fmt.Sprintf("state%d", i)), "--kill-on-exit")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		logf, err := os.Create(filepath.Join(dir, fmt.Sprintf("daemon%d.out", i)))
		if err != nil {
			return cmds, socks, err
		}
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			logf.Close()
			return cmds, socks, err
		}
		logf.Close()
		cmds, socks = append(cmds, cmd), append(socks, sock)
	}
	for _, sock := range socks {
		deadline := time.Now().Add(20 * time.Second)
		for {
			_, err := b.cliOn(sock, "ls")
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return cmds, socks, fmt.Errorf("the daemon on %s did not answer: %v", sock, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
		// What a busy agent sandbox holds: idle groups, a pipeline, a
		// shell at its prompt (waiting for input) and a long command on a
		// terminal.
		for _, argv := range [][]string{
			{"run", "--tag", "fleet", "--", "sleep", "3600"},
			{"run", "--tag", "fleet", "--", "sleep", "3600"},
			{"run", "--tag", "fleet", "--", "sleep", "3600"},
			{"run", "--tag", "pipeline", "--", "bash", "-c", "sleep 3600 | cat"},
			{"term", "--", "bash", "--norc", "-i"},
			{"term", "--", "sleep", "3600"},
		} {
			if _, err := b.cliOn(sock, argv...); err != nil {
				return cmds, socks, err
			}
		}
	}
	return cmds, socks, nil
}

func stopFleetDaemons(cmds []*exec.Cmd) {
	for _, c := range cmds {
		_ = c.Process.Signal(syscall.SIGTERM)
	}
	for _, c := range cmds {
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
}

// cliOn runs sandtop against the daemon on sock.
func (b *bench) cliOn(sock string, args ...string) ([]byte, error) {
	cmd := exec.Command(b.bin, append([]string{args[0], "--socket", sock}, args[1:]...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.dir, "XDG_CONFIG_HOME=" + b.dir, "XDG_STATE_HOME=" + b.dir, "XDG_RUNTIME_DIR=" + b.dir}
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		return out, fmt.Errorf("sandtop %v: %v: %s", args, err, msg)
	}
	return out, nil
}

// newFleet registers n sandboxes with a fresh fake control plane, every
// pausedEvery-th paused, the running ones spread over the daemons' sockets.
func newFleet(n, pausedEvery int, socks []string) (*fleet, error) {
	f := &fleet{n: n, socks: socks, plane: e2bfake.Start(fleetKey)}
	f.plane.KeepLog(false)
	f.router = &envdRouter{backend: map[string]int{}, seen: map[string]int{}}
	for _, s := range socks {
		f.router.proxies = append(f.router.proxies, unixProxy(s))
	}
	now := time.Now().UTC().Truncate(time.Second)
	for i := range n {
		id := fleetID(i)
		sb := e2bfake.Sandbox{ID: id, TemplateID: "agent", Alias: "agent-box", EnvdURL: "routed",
			Metadata: map[string]string{"fleet": "bench", "agent": fmt.Sprintf("agent-%d", i)},
			Started:  now.Add(-time.Duration(i%50) * time.Minute), EndAt: now.Add(time.Hour + time.Duration(i)*time.Second)}
		for k := range 24 { // every 5 s, a minute either side of now
			sb.Metrics = append(sb.Metrics, e2bfake.Metric{At: now.Add(time.Duration(k-12) * 5 * time.Second), CPUCount: 2,
				CPUUsedPct: float64((i*7 + k) % 100), MemUsed: int64(100+i%300) << 20, MemTotal: 512 << 20})
		}
		if pausedEvery > 0 && i%pausedEvery == pausedEvery-1 {
			sb.State = "paused"
			f.paused++
			f.router.backend[id] = -1
		} else {
			f.router.backend[id] = i % len(socks)
		}
		f.plane.Add(sb)
		f.ids = append(f.ids, id)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.plane.Close()
		return nil, err
	}
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	f.proxy = &http.Server{Handler: f.router, Protocols: &protos, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.proxy.Serve(ln) }()
	f.proxyURL = "http://" + ln.Addr().String()
	return f, nil
}

func (f *fleet) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = f.proxy.Shutdown(ctx)
	_ = f.proxy.Close()
	f.plane.Close()
}

// port is the TCP port of a loopback URL.
func port(u string) int {
	_, p, err := net.SplitHostPort(u[len("http://"):])
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(p)
	return n
}

// envdRouter plays E2B's edge: it sends each envd request to the daemon
// behind the sandbox the E2b-Sandbox-Id header names, answers 502 for a
// paused or unknown sandbox (as the edge does for one not running), and
// counts requests per sandbox.
type envdRouter struct {
	proxies []*httputil.ReverseProxy
	backend map[string]int // sandbox id: daemon index, -1 when paused; fixed once built

	mu          sync.Mutex
	seen        map[string]int // requests per sandbox id
	pausedCalls int
	unknown     int
}

func (r *envdRouter) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	id := req.Header.Get("E2b-Sandbox-Id")
	d, ok := r.backend[id]
	r.mu.Lock()
	switch {
	case !ok:
		r.unknown++
	case d < 0:
		r.pausedCalls++
	default:
		r.seen[id]++
	}
	r.mu.Unlock()
	if !ok || d < 0 {
		http.Error(w, "sandbox not running", http.StatusBadGateway)
		return
	}
	r.proxies[d].ServeHTTP(w, req)
}

// counts returns how many sandboxes got envd traffic, the requests in all,
// and the requests for paused and for unknown sandboxes.
func (r *envdRouter) counts() (sandboxes, requests, paused, unknown int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, n := range r.seen {
		requests += n
	}
	return len(r.seen), requests, r.pausedCalls, r.unknown
}

// unixProxy forwards to the daemon on sock over h2c, so that every
// stream shape (bidirectional ones too) passes through, and flushes each
// write at once, as the streams need.
func unixProxy(sock string) *httputil.ReverseProxy {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		Protocols: &protos,
	}
	return &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host, pr.Out.Host = "http", "localhost", "localhost"
		},
		Transport:     tr,
		FlushInterval: -1,
		// A stream the TUI cancels is no error worth a line.
		ErrorLog: log.New(io.Discard, "", 0),
	}
}
