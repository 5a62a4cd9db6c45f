package seam

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/backend/seam/discover"
	"sandtop/wrapper"
)

// A listing reads the whole runtime root in one call on either plane (our
// daemon's ReadStates, or one scanning command on stock envd), and must
// see exactly what reading each directory file by file sees, links and
// FIFOs a program planted included.
func TestListingReadsAllStatesAsFileByFileDoes(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		root := s.rt.cfg.RuntimeRoot
		write := func(id, name, text string) {
			dir := wrapper.StateDir(root, id)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("settled", wrapper.PidFile, "4242\n")
		write("settled", wrapper.ExitCodeFile, "143\n")
		write("settled", wrapper.SignalFile, "15\n")
		write("settled", wrapper.TagFile, "build\nline two")
		write("settled", wrapper.ArgvFile, "sh\x00-c\x00echo 'a\nb' \xff\x00")
		write("settled", wrapper.StdoutSpillFile, "0123456789")
		write("exited", wrapper.PidFile, "4243\n")
		write("exited", wrapper.ExitCodeFile, "3\n")
		write("exited", wrapper.ArgvFile, "")
		write("problem", wrapper.PidFile, "4244\n")
		write("problem", wrapper.SupervisorFile, "1\n")
		write("problem", wrapper.ProblemFile, "no space left on device")
		write("starting", wrapper.TagFile, "t")
		write("planted", wrapper.PidFile, "4245\n")
		write("planted", wrapper.ExitCodeFile, "0\n")
		outside := filepath.Join(t.TempDir(), "secret")
		if err := os.WriteFile(outside, []byte("outside"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(outside, filepath.Join(wrapper.StateDir(root, "planted"), wrapper.ArgvFile)); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mkfifo(filepath.Join(wrapper.StateDir(root, "planted"), wrapper.TagFile), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Dir(outside), wrapper.StateDir(root, "link")); err != nil {
			t.Fatal(err)
		}

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		c := discover.PlaneStates{Plane: s.rt.control}
		all, ok := s.rt.control.(control.AllStatesReader)
		if !ok {
			t.Fatalf("the %s plane reads state directories one by one", s.rt.control.Kind())
		}
		got, err := all.ReadAllStates(ctx, root)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for _, f := range got {
			ids[f.ID] = true
		}
		for _, want := range []string{"settled", "exited", "problem", "starting", "planted"} {
			if !ids[want] {
				t.Errorf("%s missing from %v", want, ids)
			}
		}
		if ids["link"] {
			t.Error("a link in processes/ was read as a state directory")
		}
		sort.Slice(got, func(i, j int) bool { return got[i].ID < got[j].ID })
		for _, g := range got {
			one, err := c.ReadOne(ctx, root, g.ID)
			if err != nil {
				t.Fatal(err)
			}
			if g.ModTime.IsZero() {
				t.Errorf("%s: no mtime", g.ID)
			}
			g.ModTime = time.Time{}
			if g.ID == "planted" && (g.Argv != nil || g.Tag != nil) {
				t.Errorf("planted: a link or a FIFO was read: argv %v tag %v", g.Argv, g.Tag)
			}
			if g.ID == "planted" {
				continue // file by file, ReadFile follows links inside the root
			}
			if s.compat {
				// ls on stock envd gives no sizes: only whether a spill exists.
				g.StdoutSize, g.StderrSize = min(g.StdoutSize, 0), min(g.StderrSize, 0)
			}
			if !reflect.DeepEqual(g, one) {
				t.Errorf("%s:\n all at once %s\n file by file %s", g.ID, dump(g), dump(one))
			}
		}
	})
}

func dump(f control.StateFiles) string {
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return "\"" + *p + "\""
	}
	return "pid " + s(f.Pid) + " exit " + s(f.ExitCode) + " signal " + s(f.Signal) + " tag " + s(f.Tag) + " argv " + s(f.Argv) +
		" problem " + s(f.Problem) + " sizes " + strconv.FormatInt(f.StdoutSize, 10) + "/" + strconv.FormatInt(f.StderrSize, 10)
}
