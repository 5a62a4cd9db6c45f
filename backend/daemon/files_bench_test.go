package daemon_test

import (
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	fspb "sandtop/backend/gen/filesystem"
	"sandtop/backend/gen/filesystem/filesystemconnect"
)

// unixHTTP is an HTTP/1.1 client for a daemon on a unix socket; URLs use
// the host "daemon".
func unixHTTP(target string) *http.Client {
	sock := strings.TrimPrefix(target, "unix:")
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		},
	}}
}

// BenchmarkFiles1GiB moves 1 GiB through /files of a daemon running as its
// own process, next to cp of the same file on the same disk, and reports
// the daemon's peak RSS after each (the target is < 64 MiB: uploads and
// downloads stream through fixed buffers).
//
//	go test -run '^$' -bench BenchmarkFiles1GiB -benchtime 1x ./backend/daemon/
func BenchmarkFiles1GiB(b *testing.B) {
	const size = 1 << 30
	c, pid := startChildDaemon(b)
	hc := unixHTTP(c.Target)
	dir, err := os.MkdirTemp("", "sandtop-files-bench-")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	src := filepath.Join(dir, "src")
	if out, err := exec.Command("dd", "if=/dev/urandom", "of="+src, "bs=1M", fmt.Sprint("count=", size>>20)).CombinedOutput(); err != nil {
		b.Fatalf("dd: %v: %s", err, out)
	}
	rss := func(b *testing.B) {
		b.ReportMetric(float64(vmHWM(b, pid))/(1<<20), "daemon-peak-rss-MiB")
	}
	check := func(b *testing.B, p string) {
		if fi, err := os.Stat(p); err != nil || fi.Size() != size {
			b.Fatalf("%s: %v", p, err)
		}
		os.Remove(p)
	}
	b.Run("cp", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			if out, err := exec.Command("cp", src, dir+"/cp").CombinedOutput(); err != nil {
				b.Fatalf("cp: %v: %s", err, out)
			}
			b.StopTimer()
			check(b, dir+"/cp")
			b.StartTimer()
		}
	})
	b.Run("upload-multipart", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			pr, pw := io.Pipe()
			mw := multipart.NewWriter(pw)
			go func() {
				f, err := os.Open(src)
				if err != nil {
					pw.CloseWithError(err)
					return
				}
				defer f.Close()
				part, err := mw.CreateFormFile("file", dir+"/up")
				if err == nil {
					_, err = io.Copy(part, f)
				}
				if err == nil {
					err = mw.Close()
				}
				pw.CloseWithError(err)
			}()
			resp, err := hc.Post("http://daemon/files", mw.FormDataContentType(), pr)
			if err != nil {
				b.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("upload: %d %s", resp.StatusCode, body)
			}
			b.StopTimer()
			check(b, dir+"/up")
			b.StartTimer()
		}
		b.StopTimer()
		rss(b)
	})
	b.Run("download", func(b *testing.B) {
		b.SetBytes(size)
		for range b.N {
			resp, err := hc.Get("http://daemon/files?" + url.Values{"path": {src}}.Encode())
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(dir + "/down")
			if err != nil {
				b.Fatal(err)
			}
			n, err := io.Copy(f, resp.Body)
			resp.Body.Close()
			f.Close()
			if err != nil || n != size || resp.StatusCode != http.StatusOK {
				b.Fatalf("download: %d, %d bytes: %v", resp.StatusCode, n, err)
			}
			b.StopTimer()
			check(b, dir+"/down")
			b.StartTimer()
		}
		b.StopTimer()
		rss(b)
	})
}

// BenchmarkListDir10k lists a directory of 10,000 files (one RPC, JSON as
// E2B's JS SDK asks for it).
func BenchmarkListDir10k(b *testing.B) {
	const n = 10000
	env := daemontest.StartTCP(b, daemon.Config{})
	dir := b.TempDir()
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%05d", i)), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	fs := filesystemconnect.NewFilesystemClient(http.DefaultClient, env.Addr, connect.WithProtoJSON())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	b.ResetTimer()
	for range b.N {
		resp, err := fs.ListDir(ctx, connect.NewRequest(&fspb.ListDirRequest{Path: dir}))
		if err != nil || len(resp.Msg.GetEntries()) != n {
			b.Fatalf("ListDir: %d entries: %v", len(resp.Msg.GetEntries()), err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "entries/s")
}
