package daemon_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/gen/process"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/testwait"
)

// With the session-dir header the program runs under a shim: it leads its
// own session and group, and its pid is in the new state directory when
// the start event arrives.
func TestStartWithSessionDirPublishesTheGroup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	dir := filepath.Join(env.RuntimeRoot, "processes", "p1")
	req := connect.NewRequest(startReq("sleep", "30"))
	req.Header().Set(daemon.SessionDirHeader, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := env.Client.Process.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() {
		t.Fatal(s.Err())
	}
	pid := int(s.Msg().GetEvent().GetStart().GetPid())
	b, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil || strings.TrimSpace(string(b)) != strconv.Itoa(pid) {
		t.Fatalf("pid file %q (%v), want %d at the start event", b, err, pid)
	}
	if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
		t.Fatalf("state dir: %v %v", st, err)
	}
	if pgid, err := unix.Getpgid(pid); err != nil || pgid != pid {
		t.Fatalf("pgid of %d = %d (%v), want its own group", pid, pgid, err)
	}
	if sid, err := unix.Getsid(pid); err != nil || sid != pid {
		t.Fatalf("sid of %d = %d (%v), want its own session", pid, sid, err)
	}
	st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	var state string
	var ppid int
	_, _ = fmt.Sscanf(string(st[strings.LastIndexByte(string(st), ')')+2:]), "%s %d", &state, &ppid)
	if argv, _ := os.ReadFile("/proc/" + strconv.Itoa(ppid) + "/cmdline"); !strings.HasPrefix(string(argv), "sandtop-shim\x00") {
		t.Fatalf("parent %d runs %q, want the shim", ppid, argv)
	}
	// Killed with its group: the shim, outside the group, publishes it.
	_ = unix.Kill(-pid, unix.SIGKILL)
	for s.Receive() {
	}
	sig, _ := os.ReadFile(filepath.Join(dir, "signal"))
	code, _ := os.ReadFile(filepath.Join(dir, "exit-code"))
	if string(sig) != "9\n" || string(code) != "137\n" {
		t.Fatalf("after SIGKILL: signal %q exit-code %q, want 9 and 137", sig, code)
	}
}

func TestStartRefusesASessionDirOutsideTheRoot(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	for _, dir := range []string{
		filepath.Join(t.TempDir(), "x"),                             // elsewhere
		filepath.Join(env.RuntimeRoot, "processes", "a", "b"),       // too deep
		filepath.Join(env.RuntimeRoot, "processes", "..", "escape"), // not clean
		"relative/dir",
	} {
		err := startTrueIn(env, dir)
		if code := connect.CodeOf(err); code != connect.CodeInvalidArgument && code != connect.CodePermissionDenied {
			t.Errorf("session dir %q: %v, want it refused", dir, err)
		}
	}
	existing := filepath.Join(env.RuntimeRoot, "processes", "taken")
	if err := os.MkdirAll(existing, 0o700); err != nil {
		t.Fatal(err)
	}
	err := startTrueIn(env, existing)
	wantCode(t, err, connect.CodeAlreadyExists, "already exists")
}

func TestStartRefusesASessionDirThroughASymlink(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	elsewhere := t.TempDir()
	processes := filepath.Join(env.RuntimeRoot, "processes")
	_ = os.RemoveAll(processes)
	if err := os.Symlink(elsewhere, processes); err != nil {
		t.Fatal(err)
	}
	err := startTrueIn(env, filepath.Join(processes, "p1"))
	wantCode(t, err, connect.CodePermissionDenied, "not a directory")
	if entries, _ := os.ReadDir(elsewhere); len(entries) != 0 {
		t.Fatalf("the daemon wrote through the symlink: %v", entries)
	}
}

// startTrueIn runs true with the session-dir header set to dir and returns
// the error the Start call or its stream ended with.
func startTrueIn(env *daemontest.Env, dir string) error {
	req := connect.NewRequest(startReq("true"))
	req.Header().Set(daemon.SessionDirHeader, dir)
	s, err := env.Client.Process.Start(context.Background(), req)
	if err != nil {
		return err
	}
	defer s.Close()
	for s.Receive() {
	}
	return s.Err()
}

// A program that replaces its state files with links (to a file it wants
// the daemon's user to truncate or own) only replaces entries of its own
// directory: the shim writes through the directory's descriptor with
// O_NOFOLLOW and renames over the links, never following them.
func TestShimNeverFollowsLinksPlantedInTheStateDir(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	dir := filepath.Join(env.RuntimeRoot, "processes", "p1")
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := `for f in exit-code signal core outlived problem; do ln -sf "$VICTIM" "$STATE/$f"; done; kill -TERM $$`
	req := connect.NewRequest(startReq("/bin/bash", "-c", script))
	req.Msg.Process.Envs = map[string]string{"VICTIM": victim, "STATE": dir, "PATH": "/usr/bin:/bin"}
	req.Header().Set(daemon.SessionDirHeader, dir)
	s, err := env.Client.Process.Start(ctxFor(t, 30*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	for s.Receive() {
	}
	_ = s.Close()
	if b, _ := os.ReadFile(victim); string(b) != "precious\n" {
		t.Fatalf("the link's target was written: %q", b)
	}
	for name, want := range map[string]string{"exit-code": "143\n", "signal": "15\n"} {
		fi, err := os.Lstat(filepath.Join(dir, name))
		if err != nil || !fi.Mode().IsRegular() {
			t.Fatalf("%s: %v %v, want a regular file", name, fi, err)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, name)); string(b) != want {
			t.Fatalf("%s = %q, want %q", name, b, want)
		}
	}
}

// The program runs as the requested user but its shim keeps the daemon's:
// the state directory is the daemon's, and the program cannot write it.
func TestShimStateDirIsNotWritableByTheProgramsUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs a root daemon to run a program as another user")
	}
	if _, err := user.Lookup("nobody"); err != nil {
		t.Skip("no user nobody")
	}
	env := daemontest.Start(t, daemon.Config{})
	dir := filepath.Join(env.RuntimeRoot, "processes", "p2")
	_ = os.Chmod(env.RuntimeRoot, 0o711) // let nobody traverse to it
	req := connect.NewRequest(startReq("/bin/sh", "-c", `id -u; ln -s /etc/passwd "$STATE/exit-code" 2>&1 || echo refused`))
	cwd := "/"
	req.Msg.Process.Cwd = &cwd
	req.Msg.Process.Envs = map[string]string{"STATE": dir, "PATH": "/usr/bin:/bin"}
	req.Header().Set(daemon.SessionDirHeader, dir)
	req.Header().Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte("nobody:")))
	s, err := env.Client.Process.Start(ctxFor(t, 30*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := drainStart(s)
	_ = s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if out := r.stdout.String(); strings.HasPrefix(out, "0\n") || !strings.Contains(out, "refused") {
		t.Fatalf("program output %q: want another uid, refused a write in the state dir", out)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Sys().(*syscall.Stat_t).Uid != 0 {
		t.Fatalf("state dir %v %v, want it owned by the daemon's user", fi, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "exit-code")); string(b) != "0\n" {
		t.Fatalf("exit-code = %q", b)
	}
}

// One group's snapshot (what a teardown polls) is read from its shim's
// subtree; it must list what the full snapshot lists for that group,
// escapees included.
func TestOneGroupSnapshotMatchesTheFullOne(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	dir := filepath.Join(env.RuntimeRoot, "processes", "p1")
	req := connect.NewRequest(startReq("bash", "-c", "setsid sleep 1000 & sleep 1000 | cat"))
	req.Header().Set(daemon.SessionDirHeader, dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := env.Client.Process.Start(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if !s.Receive() {
		t.Fatal(s.Err())
	}
	pgid := s.Msg().GetEvent().GetStart().GetPid()
	defer func() { _ = unix.Kill(-int(pgid), unix.SIGKILL) }()
	render := func(g *sandtopv1.Group) string {
		if g == nil {
			return "<none>"
		}
		var b strings.Builder
		fmt.Fprintf(&b, "pgid %d sid %d started %d tag %q origin %s dir %s argv %q;", g.GetPgid(), g.GetSid(), g.GetStartedPid(), g.GetTag(), g.GetOrigin(), g.GetStateDir(), g.GetArgv())
		for _, m := range g.GetMembers() {
			fmt.Fprintf(&b, " m%d %q", m.GetPid(), m.GetArgv())
		}
		for _, m := range g.GetEscapees() {
			fmt.Fprintf(&b, " e%d %q", m.GetPid(), m.GetArgv())
		}
		return b.String()
	}
	var one, full string
	testwait.For(t, 10*time.Second, "an escapee and three members, alike in both", func() bool {
		res, err := env.Client.Supervisor.ListGroups(ctxFor(t, 5*time.Second), connect.NewRequest(&sandtopv1.ListGroupsRequest{Pgid: pgid}))
		if err != nil || len(res.Msg.GetGroups()) != 1 {
			return false
		}
		g := res.Msg.GetGroups()[0]
		one = render(g)
		full = render(groupOf(t, env.Client, pgid))
		return len(g.GetEscapees()) == 1 && len(g.GetMembers()) == 3 && one == full
	})
	if one != full {
		t.Fatalf("one group: %s\nfull: %s", one, full)
	}
}

// A shim moves a fast stream's output to the daemon by splice, in frames of
// whatever its pipe holds: stdout and stderr, both fast at once, still
// arrive byte for byte and each in its order.
func TestShimSplicedOutputIsByteExact(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	file := randomFile(t, 8<<20)
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	const times = 3
	loop := "i=0; while [ $i -lt " + strconv.Itoa(times) + " ]; do cat " + file + "; i=$((i+1)); done"
	req := connect.NewRequest(startReq("sh", "-c", "("+loop+") >&2 & "+loop+"; wait"))
	req.Header().Set(daemon.SessionDirHeader, filepath.Join(env.RuntimeRoot, "processes", "splice"))
	s, err := env.Client.Process.Start(ctxFor(t, 60*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var stdout, stderr []byte
	for s.Receive() {
		d := s.Msg().GetEvent().GetData()
		stdout = append(stdout, d.GetStdout()...)
		stderr = append(stderr, d.GetStderr()...)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	for name, got := range map[string][]byte{"stdout": stdout, "stderr": stderr} {
		if len(got) != times*len(want) {
			t.Fatalf("%s: %d bytes, want %d", name, len(got), times*len(want))
		}
		for i := range times {
			if !bytes.Equal(got[i*len(want):(i+1)*len(want)], want) {
				t.Fatalf("%s: copy %d differs from the file", name, i)
			}
		}
	}
}

// A fast stream's pipe leaves the shim's poller (see shim.fastPipe). When
// a process outside the group (here the test itself) still holds the pipe
// after the program has ended, the shim gives up on the pipe a moment later
// all the same, and the stream ends with the exit and every byte written.
func TestShimFastStreamHeldOpenStillEnds(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	const size = 32 << 20
	req := connect.NewRequest(startReq("sh", "-c", "head -c "+strconv.Itoa(size)+" /dev/zero; sleep 1; exit 3"))
	req.Header().Set(daemon.SessionDirHeader, filepath.Join(env.RuntimeRoot, "processes", "held"))
	s, err := env.Client.Process.Start(ctxFor(t, 30*time.Second), req)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, code, ended := 0, int32(-1), false
	for s.Receive() {
		ev := s.Msg().GetEvent()
		if st := ev.GetStart(); st != nil {
			pid := int(st.GetPid())
			defer func() { _ = unix.Kill(-pid, unix.SIGKILL) }()
			held, err := os.OpenFile(fmt.Sprintf("/proc/%d/fd/1", pid), os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer held.Close()
		}
		got += len(ev.GetData().GetStdout())
		if e := ev.GetEnd(); e != nil {
			code, ended = e.GetExitCode(), true
		}
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if !ended || code != 3 || got != size {
		t.Fatalf("ended %v, exit code %d, %d bytes of stdout; want an end, 3 and %d", ended, code, got, size)
	}
}

// With the check-program header a session-dir Start refuses a program its
// exec would not find, as Resolve would, before it creates anything; one
// it finds starts as usual.
func TestStartWithCheckProgramRefusesAMissingProgram(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	hello, err := env.Client.Supervisor.Hello(ctxFor(t, 10*time.Second), connect.NewRequest(&sandtopv1.HelloRequest{}))
	if err != nil || !strings.Contains(","+strings.Join(hello.Msg.GetCapabilities(), ",")+",", ","+daemon.CapCheckProgram+",") {
		t.Fatalf("hello: %v %v, want capability %s", hello, err, daemon.CapCheckProgram)
	}
	start := func(name string, argv ...string) (*connect.ServerStreamForClient[process.StartResponse], string) {
		dir := filepath.Join(env.RuntimeRoot, "processes", name)
		req := connect.NewRequest(startReq(argv[0], argv[1:]...))
		req.Msg.Process.Envs = map[string]string{"PATH": "/usr/bin:/bin"}
		req.Header().Set(daemon.SessionDirHeader, dir)
		req.Header().Set(daemon.CheckProgramHeader, "1")
		s, err := env.Client.Process.Start(ctxFor(t, 30*time.Second), req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s, dir
	}
	for i, argv := range []string{"no-such-program-xyz", "/etc/passwd", "/no/such/dir/prog"} {
		s, dir := start(fmt.Sprintf("missing%d", i), argv)
		if s.Receive() {
			t.Fatalf("%s: an event %v; want the Start refused", argv, s.Msg())
		}
		var ce *connect.Error
		if !errors.As(s.Err(), &ce) || ce.Code() != connect.CodeNotFound || ce.Meta().Get(daemon.CheckProgramHeader) == "" || !strings.Contains(ce.Message(), argv) {
			t.Fatalf("%s: %v; want NotFound naming it, with %s in the metadata", argv, s.Err(), daemon.CheckProgramHeader)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s: the refused Start left its state directory (%v)", argv, err)
		}
	}
	s, _ := start("found", "true")
	var end *process.ProcessEvent_EndEvent
	for s.Receive() {
		if e := s.Msg().GetEvent().GetEnd(); e != nil {
			end = e
		}
	}
	if end == nil || end.GetExitCode() != 0 {
		t.Fatalf("true: end %v (%v), want exit 0", end, s.Err())
	}
}
