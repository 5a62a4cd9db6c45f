package daemon_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
)

func TestBadInputGetsPreciseErrors(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	ctx := ctxFor(t, 20*time.Second)

	t.Run("unknown pid", func(t *testing.T) {
		cs, err := c.Process.Connect(ctx, connect.NewRequest(&process.ConnectRequest{Process: bySel(12345)}))
		if err == nil {
			_, err = drainConnect(cs)
		}
		wantCode(t, err, connect.CodeNotFound, "process with pid 12345 not found")
		_, err = c.Supervisor.ExitStatus(ctx, connect.NewRequest(&sandtopv1.ExitStatusRequest{Pid: 12345}))
		wantCode(t, err, connect.CodeNotFound, "process 12345 not found")
	})
	t.Run("missing cwd", func(t *testing.T) {
		req := startReq("true")
		cwd := "/no/such/dir"
		req.Process.Cwd = &cwd
		s, err := c.Process.Start(ctx, connect.NewRequest(req))
		if err == nil {
			_, err = drainStart(s)
		}
		wantCode(t, err, connect.CodeInvalidArgument, `cwd '/no/such/dir' does not exist`)
	})
	t.Run("unknown executable", func(t *testing.T) {
		// As in envd (whose sh execs every command): it starts, sh says why,
		// and it exits 127.
		r := run(t, c, startReq("no-such-program-xyz"))
		if r.end.GetExitCode() != 127 || !strings.Contains(r.stderr.String(), "no-such-program-xyz") {
			t.Errorf("end %v, stderr %q; want exit 127 naming the program", r.end, r.stderr.String())
		}
	})
	t.Run("stream input without start", func(t *testing.T) {
		in := c.Process.StreamInput(ctx)
		_ = in.Send(&process.StreamInputRequest{Event: &process.StreamInputRequest_Data{Data: &process.StreamInputRequest_DataEvent{
			Input: &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: []byte("x")}}}}})
		_, err := in.CloseAndReceive()
		wantCode(t, err, connect.CodeInvalidArgument, "stream input must begin with a start message naming the process; got data first")
	})
	t.Run("stdin off", func(t *testing.T) {
		pid, _ := startBg(t, c, startReq("sleep", "100"))
		_, err := c.Process.SendInput(ctx, connect.NewRequest(&process.SendInputRequest{Process: bySel(pid),
			Input: &process.ProcessInput{Input: &process.ProcessInput_Stdin{Stdin: []byte("x")}}}))
		wantCode(t, err, connect.CodeFailedPrecondition, "stdin not enabled or closed")
	})
	t.Run("unsupported signal", func(t *testing.T) {
		pid, _ := startBg(t, c, startReq("sleep", "100"))
		_, err := c.Process.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{Process: bySel(pid), Signal: process.Signal_SIGNAL_UNSPECIFIED}))
		wantCode(t, err, connect.CodeUnimplemented, "use SIGTERM (15) or SIGKILL (9)")
		_, err = c.Process.SendSignal(ctx, connect.NewRequest(&process.SendSignalRequest{Process: bySel(12345), Signal: process.Signal_SIGNAL_UNSPECIFIED}))
		wantCode(t, err, connect.CodeNotFound, "process with pid 12345 not found") // envd looks the process up first
	})
	t.Run("unknown user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("only a root daemon switches users")
		}
		uc := env.Dial(envd.WithUser("no-such-user-xyz"))
		s, err := uc.Process.Start(ctx, connect.NewRequest(startReq("true")))
		if err == nil {
			_, err = drainStart(s)
		}
		wantCode(t, err, connect.CodeUnauthenticated, "invalid username: 'no-such-user-xyz'")
	})

	root := env.RuntimeRoot
	if err := os.WriteFile(filepath.Join(root, "spill.log"), []byte("0123456789"), 0o600); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("s"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("spill.log", filepath.Join(root, "inside")); err != nil {
		t.Fatal(err)
	}
	read := func(path string, off, n uint64) (*sandtopv1.ReadFileResponse, error) {
		res, err := c.Supervisor.ReadFile(ctx, connect.NewRequest(&sandtopv1.ReadFileRequest{Path: path, Offset: off, Length: n}))
		if err != nil {
			return nil, err
		}
		return res.Msg, nil
	}
	t.Run("read file ranges", func(t *testing.T) {
		r, err := read("spill.log", 2, 3)
		if err != nil || string(r.GetData()) != "234" || r.GetSize() != 10 || r.GetEof() {
			t.Fatalf("read = %v, %v", r, err)
		}
		r, err = read(filepath.Join(root, "inside"), 8, 0) // absolute, through an inner symlink
		if err != nil || string(r.GetData()) != "89" || !r.GetEof() {
			t.Fatalf("read = %v, %v", r, err)
		}
	})
	t.Run("read file outside root", func(t *testing.T) {
		_, err := read("/etc/passwd", 0, 0)
		wantCode(t, err, connect.CodePermissionDenied, `path "/etc/passwd" is outside the runtime root`)
		_, err = read("../../etc/passwd", 0, 0)
		wantCode(t, err, connect.CodePermissionDenied, "is outside the runtime root")
	})
	t.Run("read file through escaping symlink", func(t *testing.T) {
		_, err := read("escape", 0, 0)
		wantCode(t, err, connect.CodePermissionDenied, `path "escape" resolves to `)
	})
	t.Run("list dir", func(t *testing.T) {
		res, err := c.Supervisor.ListDir(ctx, connect.NewRequest(&sandtopv1.ListDirRequest{Path: ""}))
		if err != nil {
			t.Fatal(err)
		}
		names := map[string]bool{}
		for _, e := range res.Msg.GetEntries() {
			names[e.GetName()] = true
		}
		if !names["spill.log"] || !names["escape"] {
			t.Errorf("entries = %v", res.Msg.GetEntries())
		}
		_, err = c.Supervisor.ListDir(ctx, connect.NewRequest(&sandtopv1.ListDirRequest{Path: "/"}))
		wantCode(t, err, connect.CodePermissionDenied, "is outside the runtime root")
	})
}

func TestExitStatusKeepsSignal(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	c := env.Client
	r := run(t, c, startReq("sh", "-c", "kill -TERM $$"))
	if r.end.GetExitCode() != -1 || r.end.GetStatus() != "signal: terminated" {
		t.Errorf("end = %v", r.end)
	}
	res, err := c.Supervisor.ExitStatus(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.ExitStatusRequest{Pid: r.pid}))
	if err != nil {
		t.Fatal(err)
	}
	if m := res.Msg; !m.GetExited() || m.GetSignal() != 15 || m.GetExitCode() != -1 || m.GetExitedUnixMs() == 0 {
		t.Errorf("exit status = %v", m)
	}
}
