package seam

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/groupstate"
	"sandtop/testwait"
	"sandtop/wrapper"
)

// Between the program's end and the exit status its shim then publishes,
// a listing must not call the group settled: one that caught that moment
// said "exit unknown" without a command. The shim is stopped here so that
// the moment lasts; once it goes on, the group settles with its status.
func TestGroupIsNotSettledBeforeItsShimPublishes(t *testing.T) {
	s := newSeam(t, false, nil)
	argv := []string{"sh", "-c", "sleep 0.3; exit 5"}
	h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputPipe()}, 100*time.Millisecond, nil, argv...)
	list := func() PublishedGroup {
		t.Helper()
		groups, err := s.rt.listGroups(s.ctx())
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range groups {
			if g.Pgid == h.Pid() {
				return g
			}
		}
		t.Fatalf("group %d is not listed: %+v", h.Pid(), groups)
		return PublishedGroup{}
	}
	g := list()
	// The shim writes its supervisor file after the start event (see its
	// settle), so a loaded machine may list the group first.
	var b []byte
	testwait.NoError(t, 20*time.Second, func() (err error) {
		b, err = os.ReadFile(filepath.Join(g.StateDir, wrapper.SupervisorFile))
		return err
	})
	shimPid, err := strconv.Atoi(strings.Fields(string(b))[0])
	if err != nil || shimPid <= 1 {
		t.Fatalf("supervisor file %q", b)
	}
	if err := unix.Kill(shimPid, unix.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	defer func() {
		if !resumed {
			_ = unix.Kill(shimPid, unix.SIGCONT)
		}
	}()
	// The program ends and stays unreaped while its shim is stopped.
	testwait.For(t, 20*time.Second, "the program to end", func() bool { g = list(); return g.State != groupstate.Running })
	for range 3 {
		if g.State != groupstate.LeaderExited || g.ExitCode != nil || g.Problem != "" {
			t.Fatalf("before the shim publishes: %+v, want leader exited, no status and no problem", g)
		}
		time.Sleep(50 * time.Millisecond)
		g = list()
	}
	resumed = true
	if err := unix.Kill(shimPid, unix.SIGCONT); err != nil {
		t.Fatal(err)
	}
	testwait.For(t, 20*time.Second, "the group settled", func() bool { g = list(); return g.State == groupstate.Settled })
	if g.State != groupstate.Settled || g.ExitCode == nil || *g.ExitCode != 5 || strings.Join(g.Argv, " ") != strings.Join(argv, " ") || g.Problem != "" {
		t.Fatalf("after the shim published: %+v, want settled with exit 5 and the command", g)
	}
	wantExit(t, settle(t, h), 5)
}
