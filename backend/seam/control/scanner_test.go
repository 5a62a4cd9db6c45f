package control

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/backend/procscan"
	"sandtop/testwait"
)

// readTable parses a table as ReadProcessTable does, rows cut alike.
func readTable(t *testing.T, out []byte, taken time.Time) map[int]ProcessRow {
	t.Helper()
	var r tableReader
	if err := r.write(out); err != nil {
		t.Fatal(err)
	}
	rows, err := parseProcessLines(r.finish(), taken)
	if err != nil {
		t.Fatal(err)
	}
	byPid := map[int]ProcessRow{}
	for _, row := range rows {
		byPid[row.Pid] = row
	}
	return byPid
}

// startChild starts a process that dies with the test.
func startChild(t *testing.T, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The group, not just the leader: a bash's sleep would outlive it.
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
	return cmd
}

// The supervisor's table (procscan) parses to the rows ps gives for the
// same processes: argv with blanks, a newline, a tab, bytes beyond ASCII
// and an empty argument, a long argv, a zombie, a busy process.
func TestScannerTableMatchesPs(t *testing.T) {
	long := strings.Repeat("x", 100<<10)
	// bash keeps its argv while it waits for the sleep.
	odd := startChild(t, "bash", "-c", "sleep 300; :", "a b", "new\nline", "tab\there", "é", "\x01\x7f", "", "end")
	longArgs := startChild(t, "bash", "-c", "sleep 301; :", long)
	// The first sleep, still running when bash becomes the second, ends
	// unreaped under it: a zombie.
	zombieParent := startChild(t, "bash", "-c", "sleep 0.3 & exec sleep 302")
	busy := startChild(t, "bash", "-c", "while :; do :; done")
	ours := []int{odd.Process.Pid, longArgs.Process.Pid, zombieParent.Process.Pid, busy.Process.Pid}
	var zombie int
	testwait.For(t, 10*time.Second, "a zombie under the second sleep", func() bool {
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
			if err != nil {
				continue
			}
			f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
			if f[0] == "Z" && f[1] == fmt.Sprint(zombieParent.Process.Pid) {
				fmt.Sscan(e.Name(), &zombie)
			}
		}
		return zombie != 0
	})
	ours = append(ours, zombie)
	time.Sleep(1100 * time.Millisecond) // the busy loop's %CPU settles off 0

	psOut, err := exec.Command("bash", "--noprofile", "--norc", "-c", processTableScript, "bash", "").Output()
	if err != nil {
		t.Fatal(err)
	}
	psTaken := time.Now()
	var scan bytes.Buffer
	if err := procscan.WriteTable(&scan); err != nil {
		t.Fatal(err)
	}
	scanTaken := time.Now()
	ps, got := readTable(t, psOut, psTaken), readTable(t, scan.Bytes(), scanTaken)

	if _, ok := got[os.Getpid()]; ok {
		t.Error("the scanner listed itself")
	}
	for _, pid := range ours {
		p, g := ps[pid], got[pid]
		if p.Pid == 0 || g.Pid == 0 {
			t.Errorf("pid %d: in ps %v, in the scan %v", pid, p.Pid != 0, g.Pid != 0)
			continue
		}
		if pid == longArgs.Process.Pid {
			// Cut at the row's bound after columns of different widths.
			if n := min(len(p.args), len(g.args)); n < 60<<10 || p.args[:n] != g.args[:n] {
				t.Errorf("long argv: ps %d bytes, the scan %d, or they differ", len(p.args), len(g.args))
			}
			p.args, g.args, p.Argv, g.Argv = "", "", nil, nil
		}
		// A young busy process's share moves fast between the reads.
		if d := math.Abs(p.CPUPercent - g.CPUPercent); d > max(2, p.CPUPercent/4) || (pid == busy.Process.Pid && g.CPUPercent < 5) {
			t.Errorf("pid %d: %%CPU ps %.1f, the scan %.1f", pid, p.CPUPercent, g.CPUPercent)
		}
		if d := p.Started.Sub(g.Started).Abs(); d > 2*time.Second {
			t.Errorf("pid %d: started %v apart", pid, d)
		}
		if d := math.Abs(float64(p.RSSBytes) - float64(g.RSSBytes)); d > 1<<20 {
			t.Errorf("pid %d: RSS ps %d, the scan %d", pid, p.RSSBytes, g.RSSBytes)
		}
		p.CPUPercent, g.CPUPercent, p.Started, g.Started, p.RSSBytes, g.RSSBytes = 0, 0, time.Time{}, time.Time{}, 0, 0
		if pid == busy.Process.Pid && p.State != g.State {
			p.State, g.State = "", "" // running or just preempted
		}
		if fmt.Sprintf("%#v", p) != fmt.Sprintf("%#v", g) {
			t.Errorf("pid %d:\nps       %#v\nthe scan %#v", pid, p, g)
		}
	}
	if z := got[zombie]; z.State != "Z" || z.args != "[sleep] <defunct>" {
		t.Errorf("the zombie reads %q %q", z.State, z.args)
	}

	// Everything else both saw (the machine's other processes, kernel
	// threads included): the same ids, terminal and command, but for the
	// few that changed between the two reads.
	var same, differ int
	for pid, p := range ps {
		g, ok := got[pid]
		if !ok || slices.Contains(ours, pid) {
			continue
		}
		if p.Ppid == g.Ppid && p.Pgid == g.Pgid && p.Sid == g.Sid && p.Tpgid == g.Tpgid && p.TTY == g.TTY && p.args == g.args && p.Comm == g.Comm {
			same++
		} else {
			differ++
			t.Logf("pid %d differs:\nps       %+v\nthe scan %+v", pid, p, g)
		}
	}
	if same < 2 || differ > max(2, same/20) {
		t.Errorf("%d processes read alike, %d differently", same, differ)
	}
}

// The supervisor's states scan reads a real tree as the script does: odd
// names, argv with blanks and newlines, files at and over the size
// bounds, links (never followed), a pipe, a file directly in processes/.
func TestScannerStatesMatchTheScript(t *testing.T) {
	root := t.TempDir()
	procs := filepath.Join(root, "processes")
	write := func(rel, content string) {
		p := filepath.Join(procs, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a/pid", "123\n")
	write("a/argv", "sh\x00-c\x00echo a:b; x\ny\x00with blanks \x00\x00")
	write("a/tag", "t:1\n")
	write("a/stdout.log", "hello")
	write("a/stderr.log", "")
	write("a/supervisor", "")
	write("b/pid", "456\n")
	write("b/exit-code", "137\n")
	write("b/signal", "9\n")
	write("b/argv", "true\x00")
	write("d/pid", "321\n")
	write("d/exit-code", "0\n")
	write("d/argv", "")
	write("big/pid", "77\n")
	write("big/tag", strings.Repeat("t", 1025))     // over 1 KiB: not read
	write("big/problem", strings.Repeat("p", 1024)) // at it: read
	write("big/argv", strings.Repeat("a", 65537))
	write("edge/pid", "78\n")
	write("edge/exit-code", "1\n")
	write("edge/argv", strings.Repeat("b\x00", 32768)) // 64 KiB exactly
	write("odd name:with\nnewline/pid", "9\n")
	write("odd name:with\nnewline/nested/pid", "not read\n")
	write("plainfile", "x")
	write("c/pid", "789\n")
	for _, l := range [][2]string{{"a/tag", "c/tag"}, {"a", "linkdir"}, {"a/pid", "e/pid"}} {
		if err := os.MkdirAll(filepath.Join(procs, filepath.Dir(l[1])), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(procs, l[0]), filepath.Join(procs, l[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(procs, "c", "exit-code"), 0o600); err != nil {
		t.Fatal(err)
	}

	script, err := exec.Command("bash", "--noprofile", "--norc", "-c", statesScanScript, "bash", root, "").Output()
	if err != nil {
		t.Fatal(err)
	}
	var scan bytes.Buffer
	if err := procscan.WriteStates(&scan, root); err != nil {
		t.Fatal(err)
	}
	// The same records, in directory order (find's) or by name (ours).
	records := func(out []byte) []string {
		head, files, _ := bytes.Cut(out, []byte("--files--\x00"))
		f := fields(head)
		var recs []string
		for i := 0; i+3 < len(f); i += 4 {
			recs = append(recs, strings.Join(f[i:i+4], "|"))
		}
		recs = append(recs, fields(files)...)
		slices.Sort(recs)
		return recs
	}
	if w, g := records(script), records(scan.Bytes()); !slices.Equal(w, g) {
		t.Errorf("the records differ:\nscript %q\nscan   %q", w, g)
	}
	want, err := parseStatesScan(script)
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseStatesScan(scan.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	byID := func(s []StateFiles) string {
		s = slices.Clone(s)
		slices.SortFunc(s, func(a, b StateFiles) int { return strings.Compare(a.ID, b.ID) })
		b, err := json.Marshal(s) // the files' contents, not their addresses
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if w, g := byID(want), byID(got); w != g {
		t.Errorf("parsed apart:\nscript %s\nscan   %s", w, g)
	}
	if len(want) < 7 {
		t.Errorf("only %d state directories read", len(want))
	}

	// No processes/: the separator alone, as the script prints.
	empty := t.TempDir()
	scan.Reset()
	if err := procscan.WriteStates(&scan, empty); err != nil || scan.String() != "--files--\x00" {
		t.Errorf("a root without processes/: %q, %v", scan.String(), err)
	}
}
