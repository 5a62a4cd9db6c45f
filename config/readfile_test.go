package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// within runs read and fails the test unless it returns in time: a config
// read that blocks hangs every command.
func within(t *testing.T, what string, read func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- read() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s did not return within 5s", what)
		return nil
	}
}

// A FIFO, a device and an oversized file in place of the config or a
// token file each give one error naming the path, at once.
func TestSpecialFilesAreRefusedWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "config.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// Should a read block on the FIFO, a writer's open releases it when
	// the test ends.
	t.Cleanup(func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte(strings.Repeat("# padding\n", MaxFileSize/10+1)), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, want string }{
		{fifo, "named pipe"},
		{"/dev/zero", "character device"},
		{dir, "directory"},
		{big, "more than"},
	}
	for _, c := range cases {
		err := within(t, "Load "+c.path, func() error { _, err := Load(c.path); return err })
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Load(%s) = %v; want an error naming the path and %q", c.path, err, c.want)
		}
		err = within(t, "ReadTokenFile "+c.path, func() error { _, err := ReadTokenFile(c.path); return err })
		if err == nil || !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ReadTokenFile(%s) = %v; want an error naming the path and %q", c.path, err, c.want)
		}
	}
}

// A regular file just under the bound still loads.
func TestAConfigUpToTheBoundLoads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	body := "theme = \"light\"\n" + strings.Repeat("#\n", (MaxFileSize-20)/2)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(p)
	if err != nil || c.Theme != "light" {
		t.Fatalf("Load = %+v, %v", c.Theme, err)
	}
}
