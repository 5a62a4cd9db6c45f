package main

import (
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestScanCountsLog reads the lines the TUI's debug log (slog's text
// handler) carries: its start, and the last "counts shown" line.
func TestScanCountsLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tui.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	started, k, n, _ := scanCountsLog(path)
	if !started.IsZero() || n != 0 {
		t.Fatalf("empty log: started %v, %d of %d", started, k, n)
	}
	log.Debug("sandtop starting", "command", "sandtop")
	log.Debug("fleet: counts shown for 12 of 300 sandboxes")
	log.Info("something else", "n", 7)
	log.Debug("fleet: counts shown for 300 of 300 sandboxes")
	f.Close()
	started, k, n, at := scanCountsLog(path)
	if started.IsZero() || at.IsZero() || at.Before(started) || k != 300 || n != 300 {
		t.Fatalf("started %v, %d of %d at %v", started, k, n, at)
	}
}

// TestSocketsOf counts this process's own sockets: two TCP connections to
// one port, one to another, a unix pair; listening sockets left out.
func TestSocketsOf(t *testing.T) {
	envd, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer envd.Close()
	plane, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer plane.Close()
	// Never accepted: the server ends are not this process's fds.
	for _, addr := range []string{envd.Addr().String(), envd.Addr().String(), plane.Addr().String()} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fds[0])
	defer syscall.Close(fds[1])
	got := socketsOf(os.Getpid(), envd.Addr().(*net.TCPAddr).Port, plane.Addr().(*net.TCPAddr).Port)
	if want := (socketCount{envd: 2, plane: 1, unix: 2}); got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}
