package runtimeroot

import (
	"os"
	"path/filepath"
	"sandtop/safetext"
	"strings"
	"syscall"
	"testing"

	"connectrpc.com/connect"
)

// testRoot is a runtime root holding a file, a symlink out of it and a
// FIFO, reached through a symlink as a configured root may be.
func testRoot(tb testing.TB) Root {
	tb.Helper()
	base := tb.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "d"), 0o700); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(real, "d", "f"), []byte("hello"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink("/etc", filepath.Join(real, "out")); err != nil {
		tb.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(real, "fifo"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(base, "link")); err != nil {
		tb.Fatal(err)
	}
	resolved, err := filepath.EvalSymlinks(real)
	if err != nil {
		tb.Fatal(err)
	}
	return Root{Path: resolved, Configured: filepath.Join(base, "link")}
}

func TestOpenStaysInTheRoot(t *testing.T) {
	r := testRoot(t)
	for _, p := range []string{"d/f", r.Path + "/d/f", r.Configured + "/d/f"} {
		f, real, err := r.Open(p)
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		data, size, eof, err := ReadRange(f, p, 1, 0)
		f.Close()
		if err != nil || string(data) != "ello" || size != 5 || !eof || real != filepath.Join(r.Path, "d", "f") {
			t.Errorf("%s: %q %d %v %s %v", p, data, size, eof, real, err)
		}
	}
	for p, code := range map[string]connect.Code{
		"/etc/passwd":   connect.CodePermissionDenied,
		"../x":          connect.CodePermissionDenied,
		"out/passwd":    connect.CodePermissionDenied,
		"d/missing":     connect.CodeNotFound,
		r.Path + "/../": connect.CodePermissionDenied,
	} {
		if f, _, err := r.Open(p); connect.CodeOf(err) != code {
			if f != nil {
				f.Close()
			}
			t.Errorf("%s: want %v, got %v", p, code, err)
		}
	}
	// A FIFO opens at once (no writer is awaited) and is refused as not a
	// regular file.
	f, _, err := r.Open("fifo")
	if err != nil {
		t.Fatalf("fifo: %v", err)
	}
	defer f.Close()
	if _, _, _, err := ReadRange(f, "fifo", 0, 0); connect.CodeOf(err) != connect.CodeFailedPrecondition {
		t.Errorf("fifo read: %v", err)
	}
}

// FuzzPaths checks the runtime root's confinement with any path: whatever
// opens lies inside the root.
func FuzzPaths(f *testing.F) {
	r := testRoot(f)
	for _, s := range []string{"", ".", "..", "/", "/etc/passwd", "a/../../b", r.Path + "/x", r.Path + "/../x", "out/passwd", "\x00", strings.Repeat("a/", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		file, real, err := r.Open(p)
		if err != nil {
			if len(err.Error()) > 4*safetext.MaxQuoted+len(r.Path)*2+200 {
				t.Fatalf("error of %d bytes quotes too much", len(err.Error()))
			}
			return
		}
		defer file.Close()
		if _, ok := cutPathPrefix(real, r.Path); !ok {
			t.Fatalf("%q opened %s, outside %s", p, real, r.Path)
		}
	})
}
