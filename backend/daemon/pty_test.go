package daemon_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/testwait"
)

func ptyReq(cols, rows uint32, cmd string, args ...string) *process.StartRequest {
	return &process.StartRequest{
		Process: &process.ProcessConfig{Cmd: cmd, Args: args, Envs: map[string]string{"TERM": "xterm-256color"}},
		Pty:     &process.PTY{Size: &process.PTY_Size{Cols: cols, Rows: rows}},
	}
}

func bySel(pid uint32) *process.ProcessSelector {
	return &process.ProcessSelector{Selector: &process.ProcessSelector_Pid{Pid: pid}}
}

// ptyReader accumulates PTY output from a Start stream in the background.
type ptyReader struct {
	out  chan []byte
	buf  bytes.Buffer
	end  chan *process.ProcessEvent_EndEvent
	errc chan error
}

func readPTY(s *connect.ServerStreamForClient[process.StartResponse]) *ptyReader {
	r := &ptyReader{out: make(chan []byte, 1024), end: make(chan *process.ProcessEvent_EndEvent, 1), errc: make(chan error, 1)}
	go func() {
		for s.Receive() {
			ev := s.Msg().GetEvent()
			if d := ev.GetData().GetPty(); d != nil {
				r.out <- d
			}
			if e := ev.GetEnd(); e != nil {
				r.end <- e
			}
		}
		r.errc <- s.Err()
	}()
	return r
}

// waitFor reads until the accumulated output contains want.
func (r *ptyReader) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(r.buf.String(), want) {
		select {
		case b := <-r.out:
			r.buf.Write(b)
		case <-deadline:
			t.Fatalf("pty output never contained %q; got %q", want, r.buf.String())
		}
	}
}

func TestPTYSizeResizeAndInput(t *testing.T) {
	forEachTransport(t, daemon.Config{}, func(t *testing.T, env *daemontest.Env, c *envd.Client) {
		// The shell reads a line, prints the terminal size, reads another, resizes are seen by stty.
		pid, s := startBg(t, c, ptyReq(80, 24, "sh", "-c", `stty size; read a; echo "got:$a"; stty size; read b; echo "got:$b"; exit 7`))
		r := readPTY(s)
		r.waitFor(t, "24 80")

		if _, err := c.Process.Update(ctxFor(t, 5*time.Second), connect.NewRequest(&process.UpdateRequest{
			Process: bySel(pid), Pty: &process.PTY{Size: &process.PTY_Size{Cols: 132, Rows: 50}}})); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Process.SendInput(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendInputRequest{
			Process: bySel(pid), Input: &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: []byte("unary\n")}}})); err != nil {
			t.Fatal(err)
		}
		r.waitFor(t, "got:unary")
		r.waitFor(t, "50 132")

		in := c.Process.StreamInput(ctxFor(t, 10*time.Second))
		msgs := []*process.StreamInputRequest{
			{Event: &process.StreamInputRequest_Start{Start: &process.StreamInputRequest_StartEvent{Process: bySel(pid)}}},
			{Event: &process.StreamInputRequest_Keepalive{Keepalive: &process.StreamInputRequest_KeepAlive{}}},
			{Event: &process.StreamInputRequest_Data{Data: &process.StreamInputRequest_DataEvent{Input: &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: []byte("stre")}}}}},
			{Event: &process.StreamInputRequest_Data{Data: &process.StreamInputRequest_DataEvent{Input: &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: []byte("amed\n")}}}}},
		}
		for _, m := range msgs {
			if err := in.Send(m); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := in.CloseAndReceive(); err != nil {
			t.Fatal(err)
		}
		r.waitFor(t, "got:streamed")
		select {
		case e := <-r.end:
			if e.GetExitCode() != 7 {
				t.Errorf("end = %v, want exit 7", e)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no end event")
		}
		// Resizing a pipe process is an error.
		pipePid, _ := startBg(t, c, startReq("sleep", "100"))
		_, err := c.Process.Update(ctxFor(t, 5*time.Second), connect.NewRequest(&process.UpdateRequest{
			Process: bySel(pipePid), Pty: &process.PTY{Size: &process.PTY_Size{Cols: 10, Rows: 10}}}))
		wantCode(t, err, connect.CodeInvalidArgument, "has no terminal to resize")
	})
}

func foreground(t *testing.T, c *envd.Client, pid uint32) *sandtopv1.ForegroundResponse {
	t.Helper()
	res, err := c.Supervisor.Foreground(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.ForegroundRequest{Pid: pid}))
	if err != nil {
		t.Fatal(err)
	}
	return res.Msg
}

// An interactive shell on a PTY runs cat, then sleep, in the foreground:
// Foreground names the job's group, and says it waits on input for cat only.
func TestForegroundCatWaitsSleepDoesNot(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	pid, s := startBg(t, c, ptyReq(80, 24, "bash", "--norc", "--noprofile", "-i"))
	r := readPTY(s)
	send := func(text string) {
		if _, err := c.Process.SendInput(ctxFor(t, 5*time.Second), connect.NewRequest(&process.SendInputRequest{
			Process: bySel(pid), Input: &process.ProcessInput{Input: &process.ProcessInput_Pty{Pty: []byte(text)}}})); err != nil {
			t.Fatal(err)
		}
	}
	// Idle shell at its prompt: it is the foreground and reads the terminal.
	send("echo ready$((1+1))\n")
	r.waitFor(t, "ready2")
	testwait.For(t, 5*time.Second, "idle shell waiting for input", func() bool {
		fg := foreground(t, c, pid)
		return fg.GetKnown() && fg.GetPgid() == pid && fg.GetInputWaiting()
	})

	send("cat\n")
	var catPgid uint32
	testwait.For(t, 5*time.Second, "cat in the foreground, waiting for input", func() bool {
		fg := foreground(t, c, pid)
		catPgid = fg.GetPgid()
		return fg.GetKnown() && fg.GetPgid() != pid && fg.GetInputWaiting()
	})
	if g := groupOf(t, c, catPgid); g == nil || g.GetMembers()[0].GetComm() != "cat" {
		t.Errorf("foreground group %d is not cat's: %v", catPgid, g)
	}
	send("\x04") // EOF ends cat
	send("sleep 100\n")
	testwait.For(t, 5*time.Second, "sleep in the foreground, not waiting", func() bool {
		fg := foreground(t, c, pid)
		g := groupOf(t, c, fg.GetPgid())
		return fg.GetPgid() != pid && g != nil && g.GetMembers()[0].GetComm() == "sleep" && !fg.GetInputWaiting()
	})

	terms, err := c.Supervisor.ListTerminals(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.ListTerminalsRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	if ts := terms.Msg.GetTerminals(); len(ts) != 1 || ts[0].GetPid() != pid || ts[0].GetCols() != 80 || ts[0].GetRows() != 24 || ts[0].GetForegroundPgid() == pid {
		t.Errorf("terminals = %v", ts)
	}
}
