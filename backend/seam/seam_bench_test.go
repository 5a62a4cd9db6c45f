package seam

import (
	"context"
	"os/exec"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"sandtop/backend/daemon"
	"sandtop/testwait"
)

// reportLatencies reports p50/p99 of ds in milliseconds.
func reportLatencies(b *testing.B, ds []time.Duration, prefix string) {
	if len(ds) == 0 {
		return
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	at := func(q float64) float64 {
		return float64(ds[int(q*float64(len(ds)-1))]) / float64(time.Millisecond)
	}
	b.ReportMetric(at(0.50), prefix+"p50-ms")
	b.ReportMetric(at(0.99), prefix+"p99-ms")
}

// BenchmarkSpawnToPublished measures Spawn: from the call to a handle with
// a published process group (target p50 < 10 ms on sandtop's daemon).
func BenchmarkSpawnToPublished(b *testing.B) {
	spilled := Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(1024, 1<<20), Stderr: OutputCollect(1024, 1<<20)}
	cases := []struct {
		name   string
		compat bool
		stdio  Stdio
	}{
		{"extension", false, collectBoth(1024)},
		{"compat", true, collectBoth(1024)},
		// What "sandtop run" asks for: both streams spilled (tee, head).
		{"extension-spill", false, spilled},
	}
	for _, p := range cases {
		b.Run(p.name, func(b *testing.B) {
			s := newSeam(b, p.compat, func(_ *daemon.Config, rc *RuntimeConfig) { rc.PollInterval = 2 * time.Millisecond })
			ctx := context.Background()
			spec := SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: p.stdio, Grace: time.Second}
			if _, err := s.rt.baseEnvironment(ctx); err != nil { // the one-time probe
				b.Fatal(err)
			}
			var ds []time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				h, err := s.rt.Spawn(ctx, spec)
				if err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
				b.StopTimer()
				<-h.Done()
				b.StartTimer()
			}
			b.StopTimer()
			reportLatencies(b, ds, "")
		})
	}
}

func benchTeardown(b *testing.B, script string, grace time.Duration) {
	s := newSeam(b, false, func(_ *daemon.Config, rc *RuntimeConfig) { rc.PollInterval = 2 * time.Millisecond })
	ctx := context.Background()
	var ds []time.Duration
	for i := 0; i < b.N; i++ {
		h, err := s.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/bin/sh", "-c", script}, Cwd: "/", Stdio: collectBoth(64), Grace: grace})
		if err != nil {
			b.Fatal(err)
		}
		// Let the program reach its steady state (traps installed).
		testwait.For(b, 5*time.Second, "the program's first output", func() bool { return h.Collected.Stdout.Total() > 0 })
		start := time.Now()
		if err := s.rt.TeardownGroup(ctx, h.Pgid(), grace, nil); err != nil {
			b.Fatal(err)
		}
		ds = append(ds, time.Since(start))
		if ok, err := h.WaitForExit(ctx); !ok || err != nil {
			b.Fatal(ok, err)
		}
		<-h.Done()
	}
	reportLatencies(b, ds, "")
	over := make([]time.Duration, len(ds))
	for i, d := range ds {
		over[i] = d - grace
	}
	if grace < time.Second {
		reportLatencies(b, over, "beyond-grace-")
	}
}

// BenchmarkTeardownTermObeying: TERM, group empty (target < 50 ms).
func BenchmarkTeardownTermObeying(b *testing.B) {
	benchTeardown(b, `echo up; exec sleep 1000`, 10*time.Second)
}

// BenchmarkTeardownTermIgnoring: TERM, grace, KILL, empty (target grace +
// < 50 ms).
func BenchmarkTeardownTermIgnoring(b *testing.B) {
	benchTeardown(b, `trap "" TERM; echo up; sleep 1000 & sleep 1000 & wait`, 100*time.Millisecond)
}

// BenchmarkCollect1GiB streams 1 GiB into a 64 KiB collect tail and reports
// the throughput and, per collection (each iteration measured from a
// collected heap): the peak heap in use above that baseline (target < 64
// MiB), and the live heap left right after the process has settled (the
// in-process daemon keeps each exited process's 256 KiB replay for
// ExitRetention, plus stream buffers not yet released; a few MiB at most,
// not growing with the iteration count). Reported values are the worst over
// the iterations.
func BenchmarkCollect1GiB(b *testing.B) {
	s := newSeam(b, false, nil)
	ctx := context.Background()
	var worstPeak, worstLeft float64
	for i := 0; i < b.N; i++ {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		baseInuse, baseLive := ms.HeapInuse, ms.HeapAlloc
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var ms runtime.MemStats
			t := time.NewTicker(20 * time.Millisecond)
			defer t.Stop()
			for {
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peak.Load() {
					peak.Store(ms.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		start := time.Now()
		h, err := s.rt.Spawn(ctx, SpawnSpec{Argv: []string{"/usr/bin/head", "-c", "1073741824", "/dev/zero"}, Cwd: "/",
			Stdio: Stdio{Stdin: StdinIgnore(), Stdout: OutputCollect(64 << 10), Stderr: OutputCollect(64 << 10)}, Grace: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		<-h.Done()
		took := time.Since(start)
		close(stop)
		<-sampled
		if got := h.Collected.Stdout.Total(); got != 1<<30 {
			b.Fatalf("collected %d bytes", got)
		}
		if ok, err := h.WaitForExit(ctx); !ok || err != nil {
			b.Fatal(ok, err)
		}
		worstPeak = max(worstPeak, (float64(peak.Load())-float64(baseInuse))/(1<<20))
		runtime.GC()
		runtime.ReadMemStats(&ms)
		worstLeft = max(worstLeft, (float64(ms.HeapAlloc)-float64(baseLive))/(1<<20))
		b.ReportMetric(float64(1<<30)/(1<<20)/took.Seconds(), "MiB/s")
	}
	b.ReportMetric(worstPeak, "peak-heap-MiB")
	b.ReportMetric(worstLeft, "retained-MiB")
}

// BenchmarkLocalExecBaseline puts BenchmarkSpawnToPublished in context: on
// some VMs one fork+exec alone costs several milliseconds, and a spawn
// through the wrapper needs at least three before the group is published.
// "true" is one exec; "chain" is the wrapper's shape without sandtop
// (bash, mkdir, setsid, bash), run locally.
func BenchmarkLocalExecBaseline(b *testing.B) {
	cases := []struct {
		name string
		argv []string
	}{
		{"true", []string{"/bin/true"}},
		{"chain", []string{"/bin/bash", "-c", `d=$(mktemp -u); mkdir -m 700 "$d" && setsid --wait /bin/bash -c 'echo $$ >/dev/null'; rmdir "$d"`}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var ds []time.Duration
			for i := 0; i < b.N; i++ {
				start := time.Now()
				if err := exec.Command(c.argv[0], c.argv[1:]...).Run(); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			reportLatencies(b, ds, "")
		})
	}
}
