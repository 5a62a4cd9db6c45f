package seam

import (
	"bytes"
	"context"
	"io"
	"os/exec"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// rawCat is a PTY program that echoes each byte back at once: raw mode, no
// line discipline echo, cat copying input to output.
var rawCat = []string{"/bin/bash", "--noprofile", "--norc", "-c", "stty raw -echo; echo ready; exec cat"}

// BenchmarkTerminalKeystrokeEcho measures write-one-byte-see-it-echoed
// latency under cat in raw mode, through sandtop (Write → daemon PTY →
// Output) and through a plain local PTY in the same run.
func BenchmarkTerminalKeystrokeEcho(b *testing.B) {
	env := newTerminalTestEnv(b, false)
	ctx := context.Background()
	term, err := env.rt.SpawnTerminal(ctx, TerminalSpec{Argv: rawCat, Cwd: env.cwd, Rows: 24, Cols: 80, Grace: 200 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer term.Terminate(ctx)
	remote := echoLatencies(b, term.Output(), func(p []byte) error { return term.Write(ctx, p) })

	cmd := exec.Command(rawCat[0], rawCat[1:]...)
	// Dies with the test binary, even when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	master, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 24, Cols: 80})
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = master.Close()
	}()
	local := echoLatencies(b, master, func(p []byte) error { _, err := master.Write(p); return err })

	rp50, rp99 := percentile(remote, 50), percentile(remote, 99)
	lp50, lp99 := percentile(local, 50), percentile(local, 99)
	b.ReportMetric(micros(rp50), "sandtop-p50-µs")
	b.ReportMetric(micros(rp99), "sandtop-p99-µs")
	b.ReportMetric(micros(lp50), "local-p50-µs")
	b.ReportMetric(micros(lp99), "local-p99-µs")
	b.ReportMetric(float64(rp50)/float64(max(lp50, 1)), "p50-ratio")
	b.ReportMetric(0, "ns/op") // the per-op time mixes both paths; the metrics above are the result
}

// echoLatencies waits for "ready", then b.N times writes one byte and reads
// until that byte comes back.
func echoLatencies(b *testing.B, out io.Reader, write func([]byte) error) []time.Duration {
	b.Helper()
	buf := make([]byte, 256)
	var seen []byte
	deadline := time.Now().Add(10 * time.Second)
	for !bytes.Contains(seen, []byte("ready")) {
		if time.Now().After(deadline) {
			b.Fatalf("no ready line: %q", seen)
		}
		n, err := out.Read(buf)
		if err != nil {
			b.Fatal(err)
		}
		seen = append(seen, buf[:n]...)
	}
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		key := byte('a' + i%26)
		start := time.Now()
		if err := write([]byte{key}); err != nil {
			b.Fatal(err)
		}
		for got := false; !got; {
			n, err := out.Read(buf)
			if err != nil {
				b.Fatal(err)
			}
			got = slices.Contains(buf[:n], key)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	return lat
}

func percentile(d []time.Duration, p int) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
