package daemon_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// postRaw uploads body to path as a raw (octet-stream) body. An upload that
// hangs fails after 10 s.
func postRaw(addr, path string, body []byte) (int, string, error) {
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Post(filesURL(addr, path, ""), "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// An upload to a FIFO used to open it for writing and wait for a reader,
// pinning an OS thread per request. Now a FIFO, a device or a socket is
// refused at once with a clear error, and nothing is left waiting.
func TestUploadRefusesSpecialFilesAtOnce(t *testing.T) {
	e := startFS(t)
	fifo := filepath.Join(e.dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, kind string }{{fifo, "a FIFO"}, {"/dev/null", "a character device"}} {
		start := time.Now()
		code, body, err := postRaw(e.Addr, c.path, []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		if code != http.StatusBadRequest || !strings.Contains(body, "is "+c.kind+", not a regular file") {
			t.Errorf("upload to %s: %d %s; want 400 saying it is %s", c.path, code, body, c.kind)
		}
		if took := time.Since(start); took > 2*time.Second {
			t.Errorf("upload to %s took %s", c.path, took)
		}
	}
	before := threads(t)
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if code, body, err := postRaw(e.Addr, fifo, []byte("x")); err != nil || code != http.StatusBadRequest {
				t.Errorf("upload to a FIFO: %d %s %v", code, body, err)
			}
		}()
	}
	wg.Wait()
	if after := threads(t); after > before+8 {
		t.Errorf("threads went from %d to %d after 20 uploads to a FIFO", before, after)
	}
	left, _ := filepath.Glob(filepath.Join(e.dir, ".sandtop-upload-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// Concurrent uploads to one path used to truncate and write one file
// together, leaving a mix of them. Each now writes a file of its own and
// renames it over the target: the target, and every read of it meanwhile,
// is one whole upload.
func TestConcurrentUploadsNeverTearTheFile(t *testing.T) {
	e := startFS(t)
	target := filepath.Join(e.dir, "shared")
	const size = 1 << 20
	const writers = 6
	const rounds = 4
	torn := func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		if len(b) != size || bytes.Count(b, b[:1]) != size {
			return fmt.Sprintf("%d bytes, starting %q, %d of them %q", len(b), b[:min(8, len(b))], bytes.Count(b, b[:1]), b[:1])
		}
		return ""
	}
	// A new file is written in place, as envd does; replacing it is what
	// must be atomic, so the reader starts once it exists whole.
	if code, msg, err := postRaw(e.Addr, target, bytes.Repeat([]byte{'z'}, size)); err != nil || code != http.StatusOK {
		t.Fatalf("first upload: %d %s %v", code, msg, err)
	}
	stop := make(chan struct{})
	readerDone := make(chan string)
	go func() {
		bad := ""
		for {
			select {
			case <-stop:
				readerDone <- bad
				return
			default:
			}
			if b, err := os.ReadFile(target); err == nil && bad == "" {
				bad = torn(b)
			}
		}
	}()
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				body := bytes.Repeat([]byte{byte('a' + i)}, size)
				if code, msg, err := postRaw(e.Addr, target, body); err != nil || code != http.StatusOK {
					t.Errorf("round %d upload %d: %d %s %v", round, i, code, msg, err)
				}
			}()
		}
		wg.Wait()
		b, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		if why := torn(b); why != "" || len(b) == 0 {
			t.Fatalf("after round %d of %d concurrent uploads the file is torn: %s", round, writers, why)
		}
	}
	close(stop)
	if bad := <-readerDone; bad != "" {
		t.Errorf("a read during the uploads saw a torn file: %s", bad)
	}
}

// Replacing a file keeps its permission bits; a symlink is followed, not
// replaced; no temporary file stays behind.
func TestUploadKeepsModeAndFollowsSymlinks(t *testing.T) {
	e := startFS(t)
	f := filepath.Join(e.dir, "conf")
	if err := os.WriteFile(f, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(f, 0o640); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(e.dir, "link")
	if err := os.Symlink("conf", link); err != nil {
		t.Fatal(err)
	}
	if code, body, err := postRaw(e.Addr, link, []byte("new")); err != nil || code != http.StatusOK {
		t.Fatalf("upload through the link: %d %s %v", code, body, err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(f); string(b) != "new" {
		t.Errorf("the link's target holds %q", b)
	}
	if fi, _ := os.Stat(f); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %04o after the upload, want 0640", fi.Mode().Perm())
	}
	fresh := filepath.Join(e.dir, "fresh")
	if code, body, err := postRaw(e.Addr, fresh, []byte("x")); err != nil || code != http.StatusOK {
		t.Fatalf("upload of a new file: %d %s %v", code, body, err)
	}
	umask := syscall.Umask(0)
	syscall.Umask(umask)
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o666&^os.FileMode(umask) {
		t.Errorf("a new file has mode %04o, want %04o", fi.Mode().Perm(), 0o666&^umask)
	}
	left, _ := filepath.Glob(filepath.Join(e.dir, ".sandtop-upload-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}
