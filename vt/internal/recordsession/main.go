// Command recordsession captures real full-screen sessions from a PTY
// (80x24, TERM=xterm-256color) into vt/testdata, for the replay tests.
// Re-run it from the repository root:
//
//	go run ./vt/internal/recordsession
//
// Each session is saved as NAME.raw (every byte the program wrote) and
// NAME.mark (the byte offset just before the quit keys were sent, where
// the program's screen is fully drawn). Query replies (DA, cursor
// position) come from vt's own emulator, as they would from a terminal.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/creack/pty"

	"sandtop/vt"
)

type step struct {
	keys string
	wait time.Duration
}

type session struct {
	name  string
	argv  []string
	steps []step // the last step quits
}

func main() {
	out := flag.String("out", "vt/testdata", "directory for the recordings")
	flag.Parse()
	text := filepath.Join(os.TempDir(), "recordsession.go")
	if err := os.WriteFile(text, []byte(sampleText), 0o644); err != nil {
		log.Fatal(err)
	}
	sessions := []session{
		{name: "top", argv: []string{"top", "-d", "0.5"}, steps: []step{
			{"", 1500 * time.Millisecond}, {"q", time.Second},
		}},
		{name: "vim", argv: []string{"vim", "-u", "DEFAULTS", "-i", "NONE", "-n", text}, steps: []step{
			{"", time.Second}, {":set number\r", 300 * time.Millisecond}, {"/Screen\r", 300 * time.Millisecond},
			{"Otyped line\x1b", 300 * time.Millisecond}, {"G", 300 * time.Millisecond}, {"gg", 500 * time.Millisecond},
			{":q!\r", time.Second},
		}},
	}
	if _, err := exec.LookPath("vim"); err != nil {
		sessions[1] = session{name: "less", argv: []string{"less", text}, steps: []step{
			{"", time.Second}, {" ", 300 * time.Millisecond}, {"/Screen\r", 300 * time.Millisecond}, {"q", time.Second},
		}}
	}
	for _, s := range sessions {
		if err := record(s, *out); err != nil {
			log.Fatalf("%s: %v", s.name, err)
		}
	}
}

func record(s session, dir string) error {
	cmd := exec.Command(s.argv[0], s.argv[1:]...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "COLUMNS=", "LINES=")
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: 80, Rows: 24})
	if err != nil {
		return err
	}
	defer ptmx.Close()

	emu := vt.NewVT10x(80, 24)
	emu.SetResponseWriter(ptmx)
	var mu sync.Mutex
	var raw []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				mu.Lock()
				raw = append(raw, buf[:n]...)
				_, _ = emu.Write(buf[:n])
				mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	mark := 0
	for i, st := range s.steps {
		if i == len(s.steps)-1 {
			mu.Lock()
			mark = len(raw)
			mu.Unlock()
		}
		if st.keys != "" {
			if _, err := ptmx.Write([]byte(st.keys)); err != nil {
				return err
			}
		}
		time.Sleep(st.wait)
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- cmd.Wait() }()
	select {
	case <-waitErr:
	case <-time.After(3 * time.Second):
		_ = cmd.Process.Kill()
		<-waitErr
	}
	_ = ptmx.Close()
	<-done
	mu.Lock()
	defer mu.Unlock()
	if err := os.WriteFile(filepath.Join(dir, s.name+".raw"), raw, 0o644); err != nil {
		return err
	}
	fmt.Printf("%s: %d bytes, mark at %d\n", s.name, len(raw), mark)
	return os.WriteFile(filepath.Join(dir, s.name+".mark"), []byte(strconv.Itoa(mark)+"\n"), 0o644)
}

// sampleText is the file opened in the editor session.
const sampleText = `package sample

// Screen is a grid of cells.
type Screen struct {
	Cols, Rows int
	Cells      []rune
}

// Line returns row y as a string.
func (s *Screen) Line(y int) string {
	return string(s.Cells[y*s.Cols : (y+1)*s.Cols])
}

func main() {
	s := &Screen{Cols: 3, Rows: 1, Cells: []rune("abc")}
	println(s.Line(0)) // 日本語 and ünïcödé
}
`
