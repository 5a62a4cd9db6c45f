package daemon

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/testwait"
)

// http1Daemon serves d on loopback TCP and returns a Process client that
// speaks Connect over HTTP/1.1, as E2B's JS SDK does, with JSON or proto.
func http1Daemon(t *testing.T, d *Daemon, json bool) processconnect.ProcessClient {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = d.Serve(l) }()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	var opts []connect.ClientOption
	if json {
		opts = append(opts, connect.WithProtoJSON())
	}
	return processconnect.NewProcessClient(&http.Client{Transport: tr}, "http://"+l.Addr().String(), opts...)
}

// startStream starts req and reads its start event.
func startStream(t *testing.T, ctx context.Context, c processconnect.ProcessClient, req *process.StartRequest, keepalive string) (uint32, *connect.ServerStreamForClient[process.StartResponse]) {
	t.Helper()
	r := connect.NewRequest(req)
	if keepalive != "" {
		r.Header().Set(keepaliveHeader, keepalive)
	}
	s, err := c.Start(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if !s.Receive() || s.Msg().GetEvent().GetStart() == nil {
		t.Fatalf("no start event: %v %v", s.Msg(), s.Err())
	}
	return s.Msg().GetEvent().GetStart().GetPid(), s
}

// noDeadline is a context canceled after d that has no deadline: a
// client's deadline travels as Connect-Timeout-Ms, and a stream with one
// is never parked.
func noDeadline(d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	t := time.AfterFunc(d, cancel)
	return ctx, func() { t.Stop(); cancel() }
}

func withStdin(cmd string, args ...string) *process.StartRequest {
	on := true
	return &process.StartRequest{Process: &process.ProcessConfig{Cmd: cmd, Args: args}, Stdin: &on}
}

// Idle streams over HTTP/1.1 are parked: no goroutine serves their
// connections. What their processes write later (a line, a pause, then
// more than one HTTP chunk's worth) and their ends reach the client as
// on a stream net/http serves, and every stream ends cleanly.
func TestIdleHTTP1StreamsAreParked(t *testing.T) {
	for _, json := range []bool{true, false} {
		t.Run(map[bool]string{true: "json", false: "proto"}[json], func(t *testing.T) {
			const n = 12
			d := quietDaemon(t, time.Minute)
			c := http1Daemon(t, d, json)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			script := `read x; echo "got $x"; sleep 0.3; head -c 200000 /dev/zero; echo oops >&2; exit 3`
			pids := make([]uint32, n)
			streams := make([]*connect.ServerStreamForClient[process.StartResponse], n)
			for i := range n {
				pids[i], streams[i] = startStream(t, ctx, c, withStdin("sh", "-c", script), "")
			}
			testwait.For(t, 10*time.Second, "every idle stream to be parked", func() bool { return d.parkedStreams() == n })
			if k := goroutinesIn("net/http.(*conn).serve"); k != 0 {
				t.Fatalf("%d connection goroutines with %d parked streams, want none", k, n)
			}
			for _, pid := range pids {
				_, err := c.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{
					Process: &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}},
					Input:   &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: []byte("hi\n")}},
				}))
				if err != nil {
					t.Fatal(err)
				}
			}
			want := append([]byte("got hi\n"), make([]byte, 200000)...)
			for i, s := range streams {
				var out, errOut bytes.Buffer
				var end *process.ProcessEvent_EndEvent
				for s.Receive() {
					ev := s.Msg().GetEvent()
					if end != nil {
						t.Fatalf("stream %d: an event after the end: %v", i, ev)
					}
					out.Write(ev.GetData().GetStdout())
					errOut.Write(ev.GetData().GetStderr())
					end = ev.GetEnd()
				}
				if err := s.Err(); err != nil {
					t.Fatalf("stream %d: %v", i, err)
				}
				if !bytes.Equal(out.Bytes(), want) || errOut.String() != "oops\n" {
					t.Fatalf("stream %d: stdout %d bytes (%q…), stderr %q", i, out.Len(), out.Bytes()[:min(out.Len(), 10)], errOut.String())
				}
				if end.GetExitCode() != 3 || !end.GetExited() {
					t.Fatalf("stream %d: end %v, want exit 3", i, end)
				}
			}
			testwait.For(t, 10*time.Second, "no parked stream left", func() bool { return d.parkedStreams() == 0 })
		})
	}
}

// A stream with the client's deadline stays with net/http.
func TestStreamWithDeadlineIsNotParked(t *testing.T) {
	d := quietDaemon(t, time.Minute)
	c := http1Daemon(t, d, true)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, s := startStream(t, ctx, c, withStdin("sleep", "60"), "")
	// What must not happen is a parking, parkIdle after the start: wait
	// well past it, then look.
	time.Sleep(3 * parkIdle)
	if d.parkedStreams() != 0 || goroutinesIn("(*Daemon).forward") != 1 {
		t.Fatalf("a stream with a deadline was parked (%d parked, %d handlers)", d.parkedStreams(), goroutinesIn("(*Daemon).forward"))
	}
	for s.Receive() {
	}
	if s.Err() == nil {
		t.Fatal("the stream outlived its deadline")
	}
}

// parkedSleep starts a `sleep 60` on a daemon of its own over HTTP/1.1
// (JSON or proto, with the keepalive interval asked for, if any) and
// waits for its stream to be parked. The context ends within 20 s.
func parkedSleep(t *testing.T, json bool, keepalive string) (*Daemon, context.Context, *connect.ServerStreamForClient[process.StartResponse]) {
	t.Helper()
	d := quietDaemon(t, time.Minute)
	c := http1Daemon(t, d, json)
	ctx, cancel := noDeadline(20 * time.Second)
	t.Cleanup(cancel)
	_, s := startStream(t, ctx, c, withStdin("sleep", "60"), keepalive)
	testwait.For(t, 10*time.Second, "the stream to be parked", func() bool { return d.parkedStreams() == 1 })
	return d, ctx, s
}

// A parked stream sends the keepalives the client asked for.
func TestParkedStreamKeepsAlive(t *testing.T) {
	d, _, s := parkedSleep(t, true, "1")
	for range 2 {
		if !s.Receive() || s.Msg().GetEvent().GetKeepalive() == nil {
			t.Fatalf("want a keepalive, got %v (%v)", s.Msg(), s.Err())
		}
		if d.parkedStreams() != 1 {
			t.Fatal("the stream was not parked again after its keepalive")
		}
	}
}

// A client that hangs up frees its parked stream's connection; the
// process, as with any plain Start, runs on.
func TestParkedStreamClientHangsUp(t *testing.T) {
	d := quietDaemon(t, time.Minute)
	c := http1Daemon(t, d, true)
	ctx, cancel := context.WithCancel(context.Background())
	pid, _ := startStream(t, ctx, c, withStdin("sleep", "60"), "")
	testwait.For(t, 10*time.Second, "the stream to be parked", func() bool { return d.parkedStreams() == 1 })
	cancel()
	testwait.For(t, 10*time.Second, "the parked stream to end with its client", func() bool { return d.parkedStreams() == 0 })
	p, err := d.reg.lookupLive(&process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}})
	if err != nil || p.exited() {
		t.Fatalf("the process did not run on after its stream's client left: %v", err)
	}
}

// The daemon's shutdown ends a parked stream with Unavailable, as it ends
// the streams net/http serves.
func TestParkedStreamEndsAtShutdown(t *testing.T) {
	d, ctx, s := parkedSleep(t, false, "")
	if err := d.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	for s.Receive() {
		t.Fatalf("an event after the shutdown: %v", s.Msg())
	}
	if connect.CodeOf(s.Err()) != connect.CodeUnavailable || !strings.Contains(s.Err().Error(), errShuttingDown.Error()) {
		t.Fatalf("stream ended with %v, want unavailable: %v", s.Err(), errShuttingDown)
	}
}
