package daemon_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/wrapper"
)

// ReadStates answers a whole listing at once: each state directory's
// entries and its small published files. What a program plants in its own
// directory (a link out, a FIFO) is listed but never followed or opened.
func TestReadStatesReadsEveryDirectoryWithoutFollowingLinks(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx := ctxFor(t, 10*time.Second)
	res, err := env.Client.Supervisor.ReadStates(ctx, connect.NewRequest(&sandtopv1.ReadStatesRequest{}))
	if err != nil || len(res.Msg.GetDirs()) != 0 {
		t.Fatalf("before any group: %v, %v", res, err)
	}

	settled := wrapper.StateDir(env.RuntimeRoot, "settled")
	planted := wrapper.StateDir(env.RuntimeRoot, "planted")
	for _, d := range []string{settled, planted} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(settled, wrapper.PidFile, "4242\n")
	write(settled, wrapper.ExitCodeFile, "143\n")
	write(settled, wrapper.SignalFile, "15\n")
	write(settled, wrapper.TagFile, "build")
	write(settled, wrapper.ArgvFile, "sleep\x001\x00")
	write(settled, wrapper.StdoutSpillFile, "not returned")
	write(planted, wrapper.PidFile, "4243\n")
	secret := filepath.Join(t.TempDir(), "secret")
	write(filepath.Dir(secret), "secret", "outside")
	if err := os.Symlink(secret, filepath.Join(planted, wrapper.ArgvFile)); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(planted, wrapper.TagFile), 0o600); err != nil {
		t.Fatal(err)
	}
	// A link in place of a whole state directory is not one.
	if err := os.Symlink(filepath.Dir(secret), wrapper.StateDir(env.RuntimeRoot, "link")); err != nil {
		t.Fatal(err)
	}

	res, err = env.Client.Supervisor.ReadStates(ctx, connect.NewRequest(&sandtopv1.ReadStatesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]*sandtopv1.StateDir{}
	for _, d := range res.Msg.GetDirs() {
		dirs[d.GetId()] = d
	}
	if len(dirs) != 2 || dirs["settled"] == nil || dirs["planted"] == nil {
		t.Fatalf("dirs %v", dirs)
	}
	s := dirs["settled"].GetFiles()
	if string(s[wrapper.ExitCodeFile]) != "143\n" || string(s[wrapper.SignalFile]) != "15\n" || string(s[wrapper.TagFile]) != "build" ||
		string(s[wrapper.ArgvFile]) != "sleep\x001\x00" || s[wrapper.StdoutSpillFile] != nil {
		t.Errorf("settled files %q", s)
	}
	if len(dirs["settled"].GetEntries()) != 6 || dirs["settled"].GetMtimeUnixMs() == 0 {
		t.Errorf("settled entries %v, mtime %d", dirs["settled"].GetEntries(), dirs["settled"].GetMtimeUnixMs())
	}
	p := dirs["planted"].GetFiles()
	if string(p[wrapper.PidFile]) != "4243\n" || p[wrapper.ArgvFile] != nil || p[wrapper.TagFile] != nil {
		t.Errorf("planted files %q: a link or a FIFO was read", p)
	}
	if len(dirs["planted"].GetEntries()) != 3 {
		t.Errorf("planted entries %v", dirs["planted"].GetEntries())
	}

	// A settled directory is answered from memory until an entry changes.
	write(settled, wrapper.ProblemFile, "late")
	res, err = env.Client.Supervisor.ReadStates(ctx, connect.NewRequest(&sandtopv1.ReadStatesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Msg.GetDirs() {
		if d.GetId() == "settled" && string(d.GetFiles()[wrapper.ProblemFile]) != "late" {
			t.Errorf("a file added to a settled directory is not listed: %q", d.GetFiles())
		}
	}
}

// A group whose program a shim has reaped but whose exit is not published
// yet has no process left: its argv is returned already, so a listing that
// calls it settled can say what it ran. A group with a live process keeps
// its argv unread (the process table shows it).
func TestReadStatesGivesTheArgvOfAnEmptiedGroup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	ctx := ctxFor(t, 10*time.Second)
	live := exec.Command("sleep", "30")
	// Dies with the test binary, even when go test's timeout kills it.
	live.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := live.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = live.Process.Kill(); _ = live.Wait() }()
	// In the test's own group, not one of its own: the process-wide
	// reaper reaps a zombie child whose group a live daemon started, and a
	// pid of its own could once have been such a group's (pids wrap in a
	// long run); os/exec would then fail with ECHILD.
	gone := exec.Command("true")
	// Dies with the test binary, even when go test's timeout kills it.
	gone.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	for id, pid := range map[string]int{"emptied": gone.Process.Pid, "running": live.Process.Pid} {
		dir := wrapper.StateDir(env.RuntimeRoot, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for name, text := range map[string]string{wrapper.PidFile: fmt.Sprintf("%d\n", pid), wrapper.ArgvFile: id + "\x00"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := env.Client.Supervisor.ReadStates(ctx, connect.NewRequest(&sandtopv1.ReadStatesRequest{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range res.Msg.GetDirs() {
		argv, ok := d.GetFiles()[wrapper.ArgvFile]
		switch d.GetId() {
		case "emptied":
			if string(argv) != "emptied\x00" {
				t.Errorf("the emptied group's argv: %q", argv)
			}
		case "running":
			if ok {
				t.Errorf("the running group's argv was read: %q", argv)
			}
		}
	}
}
