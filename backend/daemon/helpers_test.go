package daemon_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
)

// transport is one way of reaching the daemon.
type transport struct {
	name string
	tcp  bool
	opts []envd.Option
	// recycle: a benchmark hands each data event's bytes back once read
	// (envd.RecycleOutput), as sandtop's seam does.
	recycle bool
}

var transports = []transport{
	{name: "h2c-proto-unix", opts: []envd.Option{envd.WithH2C()}},
	{name: "http1-proto-tcp", tcp: true, opts: []envd.Option{envd.WithHTTP1()}},
	{name: "h2c-json-tcp", tcp: true, opts: []envd.Option{envd.WithH2C(), envd.WithJSON()}},
	{name: "http1-json-unix", opts: []envd.Option{envd.WithHTTP1(), envd.WithJSON()}},
}

// forEachTransport runs fn once per transport, each with its own daemon.
func forEachTransport(t *testing.T, cfg daemon.Config, fn func(t *testing.T, env *daemontest.Env, c *envd.Client)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) {
			var env *daemontest.Env
			if tr.tcp {
				env = daemontest.StartTCP(t, cfg)
			} else {
				env = daemontest.Start(t, cfg)
			}
			fn(t, env, env.Dial(tr.opts...))
		})
	}
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// result is what a Start or Connect stream carried.
type result struct {
	pid            uint32
	starts         int
	stdout, stderr bytes.Buffer
	pty            bytes.Buffer
	order          []string // "out"/"err" per data event
	end            *process.ProcessEvent_EndEvent
	keepalives     int
}

func (r *result) add(ev *process.ProcessEvent) {
	switch e := ev.GetEvent().(type) {
	case *process.ProcessEvent_Start:
		r.pid = e.Start.GetPid()
		r.starts++
	case *process.ProcessEvent_Data:
		switch o := e.Data.GetOutput().(type) {
		case *process.ProcessEvent_DataEvent_Stdout:
			r.stdout.Write(o.Stdout)
			r.order = append(r.order, "out")
		case *process.ProcessEvent_DataEvent_Stderr:
			r.stderr.Write(o.Stderr)
			r.order = append(r.order, "err")
		case *process.ProcessEvent_DataEvent_Pty:
			r.pty.Write(o.Pty)
		}
	case *process.ProcessEvent_End:
		r.end = e.End
	case *process.ProcessEvent_Keepalive:
		r.keepalives++
	}
}

type eventStream interface {
	Receive() bool
	Err() error
}

// drain reads a stream to its end.
func drainStart(s *connect.ServerStreamForClient[process.StartResponse]) (*result, error) {
	r := &result{}
	for s.Receive() {
		r.add(s.Msg().GetEvent())
	}
	return r, s.Err()
}

func drainConnect(s *connect.ServerStreamForClient[process.ConnectResponse]) (*result, error) {
	r := &result{}
	for s.Receive() {
		r.add(s.Msg().GetEvent())
	}
	return r, s.Err()
}

func startReq(cmd string, args ...string) *process.StartRequest {
	f := false
	return &process.StartRequest{Process: &process.ProcessConfig{Cmd: cmd, Args: args}, Stdin: &f}
}

// run starts a command and reads its stream to the end.
func run(t testing.TB, c *envd.Client, req *process.StartRequest) *result {
	t.Helper()
	s, err := c.Process.Start(ctxFor(t, 30*time.Second), connect.NewRequest(req))
	if err != nil {
		t.Fatalf("start %s: %v", req.GetProcess().GetCmd(), err)
	}
	defer s.Close()
	r, err := drainStart(s)
	if err != nil {
		t.Fatalf("stream of %s: %v", req.GetProcess().GetCmd(), err)
	}
	if r.end == nil {
		t.Fatalf("stream of %s ended without an end event", req.GetProcess().GetCmd())
	}
	return r
}

// startBg starts a command, reads its start event and returns the pid and
// the stream (closed at cleanup).
func startBg(t testing.TB, c *envd.Client, req *process.StartRequest) (uint32, *connect.ServerStreamForClient[process.StartResponse]) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := c.Process.Start(ctx, connect.NewRequest(req))
	if err != nil {
		t.Fatalf("start %s: %v", req.GetProcess().GetCmd(), err)
	}
	t.Cleanup(func() { s.Close() })
	if !s.Receive() {
		t.Fatalf("start %s: no start event: %v", req.GetProcess().GetCmd(), s.Err())
	}
	pid := s.Msg().GetEvent().GetStart().GetPid()
	if pid == 0 {
		t.Fatalf("start %s: first event is not start: %v", req.GetProcess().GetCmd(), s.Msg())
	}
	return pid, s
}

func wantCode(t testing.TB, err error, code connect.Code, msgPart string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want %s error containing %q, got success", code, msgPart)
	}
	if got := connect.CodeOf(err); got != code {
		t.Fatalf("want code %s, got %s: %v", code, got, err)
	}
	if !bytes.Contains([]byte(err.Error()), []byte(msgPart)) {
		t.Fatalf("want message containing %q, got %q", msgPart, err.Error())
	}
}
