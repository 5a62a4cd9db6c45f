package ui

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"sandtop/testwait"
)

// outputOf opens 4100's output pane with two lines in it.
func outputOf(t *testing.T, mod ...func(*Options)) *Model {
	t.Helper()
	m, src := newTestModel(t, 160, 45, mod...)
	src.outputs[4100] = "first line\nsecond line\n"
	press(t, m, "j", "enter")
	testwait.For(t, waitBound, "two output lines", func() bool { m.drainStreams(); return m.detail.out.count() == 2 })
	return m
}

// clipboardText is the text a command hands Bubble Tea for the clipboard.
func clipboardText(t *testing.T, cmd tea.Cmd) string {
	t.Helper()
	batch, ok := cmd().(tea.BatchMsg)
	if !ok {
		t.Fatalf("copy returned no batch")
	}
	want := reflect.TypeOf(tea.SetClipboard("")())
	for _, c := range batch {
		if msg := c(); reflect.TypeOf(msg) == want {
			return reflect.ValueOf(msg).String()
		}
	}
	t.Fatalf("copy set no clipboard")
	return ""
}

func TestCopySaysWhereTheTextWent(t *testing.T) {
	m := outputOf(t)
	if got := clipboardText(t, m.copyOutput()); got != "first line\nsecond line\n" {
		t.Fatalf("clipboard = %q", got)
	}
	press(t, m, "y")
	if !strings.Contains(m.status, "sent 2 lines to the terminal's clipboard (OSC 52") || strings.Contains(m.status, "copied") {
		t.Fatalf("status = %q", m.status)
	}
}

func TestCopyInsideTmuxAlsoFillsItsBuffer(t *testing.T) {
	var buffer string
	m := outputOf(t, func(o *Options) { o.Tmux = func(s string) error { buffer = s; return nil } })
	press(t, m, "y")
	if buffer != "first line\nsecond line\n" {
		t.Fatalf("tmux buffer = %q", buffer)
	}
	if !strings.Contains(m.status, "tmux's buffer (prefix ])") || !strings.Contains(m.status, "OSC 52") {
		t.Fatalf("status = %q", m.status)
	}
}

// A save goes to the exports directory unless an absolute path is asked
// for, and says the path; never the working directory.
func TestSaveGoesToTheExportsDirectory(t *testing.T) {
	exports := filepath.Join(t.TempDir(), "exports")
	cwd := t.TempDir()
	t.Chdir(cwd)
	m := outputOf(t, func(o *Options) { o.ExportDir = exports })
	press(t, m, "ctrl+s", "enter")
	want := filepath.Join(exports, m.defaultSaveName())
	if b, err := os.ReadFile(want); err != nil || string(b) != "first line\nsecond line\n" {
		t.Fatalf("saved file %s: %q, %v", want, b, err)
	}
	if !strings.Contains(m.status, "saved 2 lines to "+want) {
		t.Fatalf("status = %q", m.status)
	}
	press(t, m, "ctrl+s")
	m.dialog.(*prompt).input.SetValue("mine.log")
	press(t, m, "enter")
	if _, err := os.Stat(filepath.Join(exports, "mine.log")); err != nil {
		t.Fatalf("a relative name is not under the exports directory: %v", err)
	}
	abs := filepath.Join(t.TempDir(), "abs.log")
	press(t, m, "ctrl+s")
	m.dialog.(*prompt).input.SetValue(abs)
	press(t, m, "enter")
	if _, err := os.Stat(abs); err != nil {
		t.Fatalf("an absolute path was not honoured: %v", err)
	}
	if entries, _ := os.ReadDir(cwd); len(entries) != 0 {
		t.Fatalf("saves wrote into the working directory: %v", entries)
	}
}

// TmuxBuffer puts the text in the paste buffer of the tmux sandtop runs
// in (found through $TMUX, as tmux itself finds it).
func TestTmuxBufferFillsTmuxsPasteBuffer(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("no tmux")
	}
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) string {
		t.Helper()
		out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmux("new-session", "-d", "-x", "80", "-y", "24", "sleep 60")
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	t.Setenv("TMUX", sock+",0,0")
	if err := TmuxBuffer("first line\nsecond line\n"); err != nil {
		t.Fatal(err)
	}
	if got := tmux("show-buffer"); got != "first line\nsecond line\n" {
		t.Fatalf("tmux buffer = %q", got)
	}
}
