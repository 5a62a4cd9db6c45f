package seam

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/backend/daemon"
	"sandtop/groupstate"
	"sandtop/testwait"
)

// smallDisk mounts a tmpfs of size bytes (root only) as a runtime root.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+size+",mode=0700"); err != nil {
		t.Skipf("needs a tmpfs of its own (root): %v", err)
	}
	t.Cleanup(func() { _ = unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// fillDisk writes until the filesystem under dir is full.
func fillDisk(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, "fill"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 4096)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				t.Fatal(err)
			}
			return
		}
	}
}

// A state directory that cannot be written before the program starts
// fails the spawn with one error naming the path and the reason, and the
// program never runs.
func TestShimStartFailsWhenTheStateCannotBeWritten(t *testing.T) {
	disk := smallDisk(t, "256k")
	s := newSeam(t, false, func(d *daemon.Config, _ *RuntimeConfig) { d.RuntimeRoot = filepath.Join(disk, "runtime") })
	if err := os.MkdirAll(filepath.Join(disk, "runtime", "processes"), 0o700); err != nil {
		t.Fatal(err)
	}
	fillDisk(t, disk)
	marker := filepath.Join(t.TempDir(), "ran")
	_, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"touch", marker}, Cwd: "/", Stdio: collectBoth(64), Grace: 100 * time.Millisecond})
	if err == nil {
		t.Fatal("spawn on a full state disk succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, filepath.Join(disk, "runtime", "processes")+"/") || !strings.Contains(msg, "no space left on device") || strings.Contains(msg, "\n") {
		t.Fatalf("error %q does not name the path and the reason on one line", msg)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("the program ran although its state could not be written")
	}
	if entries, _ := os.ReadDir(filepath.Join(disk, "runtime", "processes")); len(entries) != 0 {
		t.Fatalf("the failed spawn left %v behind", entries)
	}
}

// When the exit status cannot be published after the program ran, the
// daemon logs why and the group is listed with exit unknown and the
// reason, not as unpublished; the handle still gets the real status.
func TestShimUnpublishedExitIsListedAsUnknown(t *testing.T) {
	disk := smallDisk(t, "512k")
	var log lockedBuffer
	s := newSeam(t, false, func(d *daemon.Config, _ *RuntimeConfig) {
		d.RuntimeRoot = filepath.Join(disk, "runtime")
		d.Logger = slog.New(slog.NewTextHandler(&log, nil))
	})
	h := s.spawn(Stdio{Stdin: StdinIgnore(), Stdout: OutputPipe(), Stderr: OutputPipe()}, 100*time.Millisecond, nil,
		"bash", "-c", "head -c 2M /dev/zero > "+filepath.Join(disk, "fill")+" 2>/dev/null; exit 7")
	wantExit(t, settle(t, h), 7)
	var g PublishedGroup
	testwait.For(t, 20*time.Second, "the group settled", func() bool {
		groups, err := s.rt.listGroups(s.ctx())
		if err != nil {
			t.Fatal(err)
		}
		if len(groups) == 1 {
			g = groups[0]
		}
		return g.State == groupstate.Settled
	})
	if g.State != groupstate.Settled || g.ExitCode != nil || !strings.Contains(g.Problem, "exit unknown") || !strings.Contains(g.Problem, "no space left on device") {
		t.Fatalf("group %+v, want settled with exit unknown and the reason", g)
	}
	if !strings.Contains(log.String(), "could not publish the exit status") {
		t.Fatalf("the daemon did not log the failure:\n%s", log.String())
	}
}
