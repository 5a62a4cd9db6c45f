package cli

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"sandtop/backend/envd"
	"sandtop/backend/seam"
	"sandtop/testwait"
)

// spillReads measures the file reads a sandtop invocation makes: the
// answers of the daemon's Supervisor/ReadFile, counted on the wire, with
// compression refused so that a body's length is the data's.
type spillReads struct {
	next http.RoundTripper
	mu   sync.Mutex
	// calls and total are the reads and their answers' bytes; largest is
	// the biggest single answer (what one read holds in memory).
	calls          int
	total, largest int64
}

func (c *spillReads) RoundTrip(r *http.Request) (*http.Response, error) {
	if !strings.HasSuffix(r.URL.Path, "/ReadFile") {
		return c.next.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for _, h := range []string{"Accept-Encoding", "Connect-Accept-Encoding", "Grpc-Accept-Encoding"} {
		r.Header.Del(h)
	}
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && enc != "identity" {
		return nil, fmt.Errorf("the answer is %s-compressed though compression was refused", enc)
	}
	resp.Body = &countedBody{ReadCloser: resp.Body, done: c.add}
	return resp, nil
}

func (c *spillReads) CloseIdleConnections() {
	if ci, ok := c.next.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func (c *spillReads) add(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls++
	c.total += n
	c.largest = max(c.largest, n)
}

func (c *spillReads) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.calls, c.total, c.largest = 0, 0, 0
}

func (c *spillReads) get() (calls int, total, largest int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.calls, c.total, c.largest
}

type countedBody struct {
	io.ReadCloser
	n    int64
	once sync.Once
	done func(int64)
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *countedBody) Close() error {
	b.once.Do(func() { b.done(b.n) })
	return b.ReadCloser.Close()
}

// newInprocCounted is newInproc whose invocations count their file reads.
func newInprocCounted(t *testing.T) (*inproc, *spillReads) {
	p := newInproc(t, "")
	reads := &spillReads{}
	p.f.Open = func(ctx context.Context, r resolved) (*connection, error) {
		reads.next = &invocation{socket: p.env.Socket}
		return r.open(ctx, envd.WithHTTPClient(&http.Client{Transport: reads}))
	}
	return p, reads
}

// seqOutput is what "seq 1 n" prints.
func seqOutput(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// waitForLogs runs plain logs until it prints want on stdout (the group's
// supervisor may still be writing when the group is settled).
func waitForLogs(t *testing.T, p *inproc, pgid int, want string) {
	t.Helper()
	ctx := testCtx(t)
	testwait.For(t, 60*time.Second, "logs to print the whole record", func() bool {
		p.reset()
		if err := runLogs(ctx, p.f, logsOptions{pid: pgid}); err != nil {
			t.Fatalf("logs: %v", err)
		}
		return len(p.out.String()) == len(want)
	})
}

// A spill far above the 8 MiB a whole-file read allowed prints exactly,
// read in pieces no bigger than one chunk.
func TestInprocLogsPrintsABigSpillExactlyInBoundedPieces(t *testing.T) {
	t.Parallel()
	p, reads := newInprocCounted(t)
	const n = 3_000_000 // 22.9 MB of numbers, no two lines alike
	want := seqOutput(n)
	_, pgid := p.run(t, "", "seq", "1", strconv.Itoa(n))
	p.waitState(t, pgid, "settled")
	waitForLogs(t, p, pgid, want)
	reads.reset()
	p.reset()
	if err := runLogs(testCtx(t), p.f, logsOptions{pid: pgid}); err != nil {
		t.Fatal(err)
	}
	if got := p.out.String(); sha256.Sum256([]byte(got)) != sha256.Sum256([]byte(want)) {
		t.Fatalf("logs printed %d bytes that differ from the program's %d", len(got), len(want))
	}
	calls, total, largest := reads.get()
	t.Logf("%d bytes in %d reads, the largest %d bytes", len(want), calls, largest)
	if largest > seam.MaxStateRead+1024 {
		t.Fatalf("one read answered %d bytes; reads must stay within %d", largest, seam.MaxStateRead)
	}
	if total > int64(len(want))+int64(calls)*1024 {
		t.Fatalf("read %d bytes for a %d-byte record", total, len(want))
	}
}

// logs -f of a group whose leader exited reads each byte of the record
// once, however many times it polls, and ends when the group is empty;
// of a settled group it prints the record once and ends at once.
func TestInprocLogsFollowReadsEachByteOnce(t *testing.T) {
	t.Parallel()
	p, reads := newInprocCounted(t)
	const n = 300_000 // 2.1 MB
	want := seqOutput(n)
	// The leader exits at once; its background sleep keeps the group
	// alive for a few polls.
	_, pgid := p.run(t, "", "bash", "-c", "seq 1 "+strconv.Itoa(n)+"; sleep 2 & exit 0")
	p.waitState(t, pgid, "leader-exited")
	reads.reset()
	p.reset()
	start := time.Now()
	if err := runLogs(testCtx(t), p.f, logsOptions{pid: pgid, follow: true}); err != nil {
		t.Fatal(err)
	}
	polled := time.Since(start)
	if got := p.out.String(); got != want {
		t.Fatalf("logs -f printed %d bytes, want the program's %d", len(got), len(want))
	}
	calls, total, _ := reads.get()
	t.Logf("followed for %v: %d reads, %d bytes", polled, calls, total)
	if polled < 3*followPoll {
		t.Fatalf("logs -f ended after %v, before the group could have emptied", polled)
	}
	if total > int64(len(want))+int64(calls)*1024 {
		t.Fatalf("logs -f read %d bytes in %d reads for a %d-byte record: it re-read it", total, calls, len(want))
	}

	p.waitState(t, pgid, "settled")
	reads.reset()
	p.reset()
	done := make(chan error, 1)
	go func() { done <- runLogs(testCtx(t), p.f, logsOptions{pid: pgid, follow: true}) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("logs -f of a settled group did not end")
	}
	if got := p.out.String(); got != want {
		t.Fatalf("logs -f of a settled group printed %d bytes, want %d", len(got), len(want))
	}
	if calls, total, _ := reads.get(); total > int64(len(want))+int64(calls)*1024 {
		t.Fatalf("logs -f of a settled group read %d bytes in %d reads for a %d-byte record", total, calls, len(want))
	}
}
