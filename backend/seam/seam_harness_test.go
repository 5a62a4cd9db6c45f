package seam

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/gen/sandtop/v1/sandtopv1connect"
	"sandtop/backend/seam/control"
	"sandtop/testwait"
)

// wireLog is a connect interceptor on the test's client: it records every
// call the runtime makes to the real daemon, and fails a chosen call of a
// chosen procedure on command. It is the only fake in these tests, and only
// for faults.
type wireLog struct {
	mu     sync.Mutex
	calls  []string
	faults map[string][]fault
	seen   map[string]int
	holds  map[string]chan struct{}
	drops  map[string]bool
	// waits counts the ListGroups calls that ask the daemon to wait for a
	// group to empty.
	waits int
	// forge, when set, may rewrite an answer (a unary response, or one
	// event of a stream) before the runtime sees it; req is the request.
	forge func(req, res any)
}

func (w *wireLog) forged(req, res any) {
	w.mu.Lock()
	f := w.forge
	w.mu.Unlock()
	if f != nil {
		f(req, res)
	}
}

// forgeWith installs f as the wire's forger.
func (w *wireLog) forgeWith(f func(req, res any)) {
	w.mu.Lock()
	w.forge = f
	w.mu.Unlock()
}

type fault struct {
	nth int // 1-based count of calls of that kind; 0 = every call
	err error
}

// kindOf names a call: the procedure's method, and for Start what the
// script is for, so a compat "kill" is told apart from the wrapper. A spawn
// on sandtop's daemon (a shim start, with the session-dir header) counts as
// the wrapper's Start too.
func kindOf(procedure string, msg any, spawn bool) string {
	method := procedure[strings.LastIndex(procedure, "/")+1:]
	switch m := msg.(type) {
	case *process.StartRequest:
		script := strings.Join(m.GetProcess().GetArgs(), " ")
		switch {
		case spawn, strings.Contains(script, "sandtop-wrapper"):
			return "Start:wrapper"
		case strings.Contains(script, "kill -s"):
			return "Start:kill"
		case strings.Contains(script, "ps -e"):
			return "Start:ps"
		case strings.Contains(script, "getent passwd"):
			return "Start:probe"
		case strings.Contains(script, "rm -rf"):
			return "Start:rm"
		case strings.Contains(script, "read -r name len"):
			return "Start:state"
		case strings.Contains(script, "runner.bash"):
			return "Start:terminal"
		}
		return "Start:other"
	case *sandtopv1.SignalGroupRequest:
		return method + ":" + control.SignalName(sigNum(int(m.GetSignal())))
	case *process.SendSignalRequest:
		return method + ":" + m.GetSignal().String()
	}
	return method
}

func (w *wireLog) note(ctx context.Context, procedure string, msg any, spawn bool) error {
	k := kindOf(procedure, msg, spawn)
	w.mu.Lock()
	w.calls = append(w.calls, k)
	if w.seen == nil {
		w.seen = map[string]int{}
	}
	w.seen[k]++
	if lg, ok := msg.(*sandtopv1.ListGroupsRequest); ok && lg.GetWaitEmptyMs() > 0 {
		w.waits++
	}
	hold := w.holds[k]
	for _, f := range w.faults[k] {
		if f.nth == 0 || f.nth == w.seen[k] {
			w.mu.Unlock()
			return f.err
		}
	}
	w.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return connect.NewError(connect.CodeCanceled, ctx.Err())
		}
	}
	return nil
}

// holdOn makes every call of kind wait, before it reaches the daemon, until
// release is called or the call's context ends: a slow network at a chosen
// moment.
func (w *wireLog) holdOn(kind string) (release func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.holds == nil {
		w.holds = map[string]chan struct{}{}
	}
	ch := make(chan struct{})
	w.holds[kind] = ch
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			delete(w.holds, kind)
			w.mu.Unlock()
			close(ch)
		})
	}
}

// failOn makes the nth call (0: every call) of kind fail with err.
func (w *wireLog) failOn(kind string, nth int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.faults == nil {
		w.faults = map[string][]fault{}
	}
	w.faults[kind] = append(w.faults[kind], fault{nth, err})
}

func (w *wireLog) clearFaults() {
	w.mu.Lock()
	w.faults = nil
	w.mu.Unlock()
}

// count is how many calls of the given kinds were made.
// callsOf lists the calls whose kind starts with prefix ("Start" for every
// kind of Start).
func (w *wireLog) callsOf(prefix string) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, k := range w.calls {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	return out
}

func (w *wireLog) count(kinds ...string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, k := range kinds {
		n += w.seen[k]
	}
	return n
}

// livenessKinds are the calls that tell whether a group is alive, on
// either plane.
var livenessKinds = []string{"ListGroups", "Start:ps"}

// failLiveness makes every liveness call fail.
func (w *wireLog) failLiveness(err error) {
	for _, k := range livenessKinds {
		w.failOn(k, 0, err)
	}
}

// signalCalls counts every call that sends a signal, on either plane.
func (w *wireLog) signalCalls() int {
	return w.count("Start:kill", "SignalGroup:SIGTERM", "SignalGroup:SIGKILL", "SendSignal:SIGNAL_SIGKILL", "SendSignal:SIGNAL_SIGTERM")
}

func (w *wireLog) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := w.note(ctx, req.Spec().Procedure, req.Any(), false); err != nil {
			return nil, err
		}
		res, err := next(ctx, req)
		if err == nil {
			w.forged(req.Any(), res.Any())
		}
		return res, err
	}
}

func (w *wireLog) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		return &loggedConn{StreamingClientConn: next(ctx, spec), w: w, ctx: ctx}
	}
}

func (w *wireLog) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}

type loggedConn struct {
	connect.StreamingClientConn
	w    *wireLog
	ctx  context.Context
	kind string
	req  any
}

// dropOutput drops the output events of the streams of kind (start and
// end still arrive): output lost on the way, as a broken proxy would.
func (w *wireLog) dropOutput(kind string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.drops == nil {
		w.drops = map[string]bool{}
	}
	w.drops[kind] = true
}

func (c *loggedConn) Receive(msg any) error {
	for {
		if err := c.StreamingClientConn.Receive(msg); err != nil {
			return err
		}
		c.w.mu.Lock()
		drop := c.w.drops[c.kind]
		c.w.mu.Unlock()
		if m, ok := msg.(*process.StartResponse); !drop || !ok || m.GetEvent().GetData() == nil {
			c.w.forged(c.req, msg)
			return nil
		}
	}
}

func (c *loggedConn) Send(msg any) error {
	spawn := c.RequestHeader().Get(daemon.SessionDirHeader) != ""
	c.kind, c.req = kindOf(c.Spec().Procedure, msg, spawn), msg
	if err := c.w.note(c.ctx, c.Spec().Procedure, msg, spawn); err != nil {
		return err
	}
	return c.StreamingClientConn.Send(msg)
}

// seam is one daemon, a logged client, and a Runtime over it.
type seam struct {
	t      testing.TB
	d      *daemontest.Env
	wire   *wireLog
	rt     *Runtime
	proc   processconnect.ProcessClient
	sup    sandtopv1connect.SupervisorClient
	compat bool
}

var bothPlanes = []struct {
	name   string
	compat bool
}{{"extension", false}, {"compat", true}}

// forBothPlanes runs body against the extension and against a daemon in
// compat mode (stock envd's surface), as parallel subtests.
func forBothPlanes(t *testing.T, body func(t *testing.T, s *seam)) {
	for _, p := range bothPlanes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			body(t, newSeam(t, p.compat, nil))
		})
	}
}

func newSeam(t testing.TB, compat bool, tweak func(*daemon.Config, *RuntimeConfig)) *seam {
	t.Helper()
	dcfg := daemon.Config{Compat: compat, Env: []string{
		"PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", "LANG=C.UTF-8",
		"NPM_TOKEN=npm-secret", "DSH_STALE=stale", "dsh_lower=kept", "KEEP=ambient", "my_password=pw",
	}}
	rcfg := RuntimeConfig{Cwd: t.TempDir(), PollInterval: 5 * time.Millisecond}
	if tweak != nil {
		tweak(&dcfg, &rcfg)
	}
	d := daemontest.Start(t, dcfg)
	s := &seam{t: t, d: d, wire: &wireLog{}, compat: compat}
	hc := &http.Client{Transport: unixH2C(d.Socket)}
	opts := connect.WithInterceptors(s.wire)
	s.proc = processconnect.NewProcessClient(hc, "http://localhost", opts)
	s.sup = sandtopv1connect.NewSupervisorClient(hc, "http://localhost", opts)
	if rcfg.RuntimeRoot == "" {
		rcfg.RuntimeRoot = d.RuntimeRoot
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rt, err := NewRuntimeClients(ctx, s.proc, s.sup, rcfg)
	if err != nil {
		t.Fatal(err)
	}
	s.rt = rt
	t.Cleanup(func() {
		s.wire.clearFaults()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if err := rt.Dispose(ctx); err != nil {
			t.Errorf("dispose: %v", err)
		}
		hc.CloseIdleConnections()
	})
	return s
}

func unixH2C(sock string) *http.Transport {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Transport{
		Protocols: &p,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}
}

func (s *seam) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	s.t.Cleanup(cancel)
	return ctx
}

// spawn starts argv with the given stdio and grace.
func (s *seam) spawn(stdio Stdio, grace time.Duration, env []EnvEntry, argv ...string) *Handle {
	s.t.Helper()
	h, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: argv, Cwd: "/", Stdio: stdio, Grace: grace, Env: env})
	if err != nil {
		s.t.Fatalf("spawn %q: %v", argv, err)
	}
	return h
}

func collectBoth(max int64) Stdio {
	return Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(max), Stderr: OutputCollect(max)}
}

// settle waits (bounded) for the outcome.
func settle(t testing.TB, h *Handle) Outcome {
	t.Helper()
	select {
	case <-h.Done():
	case <-time.After(30 * time.Second):
		t.Fatalf("process %d did not settle", h.Pid())
	}
	o, err := h.Outcome()
	if err != nil {
		t.Fatalf("outcome: %v", err)
	}
	return o
}

// waitGone waits (bounded) for the whole tree, failing on error or timeout.
func waitTreeGone(t testing.TB, h *Handle) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ok, err := h.WaitForExit(ctx)
	if err != nil || !ok {
		t.Fatalf("group %d not gone: ok=%v err=%v", h.Pgid(), ok, err)
	}
}

func wantExit(t testing.TB, o Outcome, code int) {
	t.Helper()
	if o.ExitCode == nil || *o.ExitCode != code || o.Signal != "" {
		t.Fatalf("outcome %v, want exit code %d", o, code)
	}
}

func wantSignal(t testing.TB, o Outcome, sig string) {
	t.Helper()
	if o.ExitCode != nil || o.Signal != sig {
		t.Fatalf("outcome %v, want %s", o, sig)
	}
}

var errInjected = errors.New("injected transport failure")

// spawnReady runs an sh script that prints "ready" once its traps are set,
// and waits for that line (signals sent earlier would hit the defaults).
func spawnReady(t testing.TB, s *seam, grace time.Duration, script string) *Handle {
	t.Helper()
	h := s.spawn(collectBoth(1024), grace, nil, "/bin/sh", "-c", script)
	testwait.For(t, 15*time.Second, "ready", func() bool { return strings.Contains(h.Collected.Stdout.ReadFrom(0).Text, "ready") })
	return h
}
