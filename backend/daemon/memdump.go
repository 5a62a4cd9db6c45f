package daemon

import (
	"bytes"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
)

// watchMemoryDumps writes, on each SIGUSR1, where the daemon's memory is
// into dir: memory-N.txt (the Go runtime's memory classes, goroutines and
// GC cycles, then /proc/self/smaps_rollup) and memory-N.heap (a heap
// profile). It is for measuring (bench -sdk-memory): the figures VmRSS
// alone cannot tell apart, such as the runtime's own bookkeeping, the
// heap and the binary's pages. A dump allocates a little itself, so read
// VmRSS before asking for one.
func watchMemoryDumps(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	go func() {
		for n := 1; ; n++ {
			<-ch
			base := filepath.Join(dir, fmt.Sprintf("memory-%d", n))
			_ = os.WriteFile(base+".txt", memoryReport(), 0o600)
			// Every mapping's own figures, to tell which region grew.
			if smaps, err := os.ReadFile("/proc/self/smaps"); err == nil {
				_ = os.WriteFile(base+".smaps", smaps, 0o600)
			}
			if f, err := os.Create(base + ".heap"); err == nil {
				_ = pprof.Lookup("heap").WriteTo(f, 0)
				_ = f.Close()
			}
		}
	}()
	return nil
}

// memoryReport is a dump's text: "name value" lines.
func memoryReport() []byte {
	var samples []metrics.Sample
	for _, d := range metrics.All() {
		if d.Kind == metrics.KindUint64 && (strings.HasPrefix(d.Name, "/memory/classes/") ||
			strings.HasPrefix(d.Name, "/sched/goroutines") || d.Name == "/gc/cycles/total:gc-cycles") {
			samples = append(samples, metrics.Sample{Name: d.Name})
		}
	}
	metrics.Read(samples)
	var b bytes.Buffer
	for _, s := range samples {
		fmt.Fprintf(&b, "%s %d\n", s.Name, s.Value.Uint64())
	}
	if rollup, err := os.ReadFile("/proc/self/smaps_rollup"); err == nil {
		// "Rss:  22416 kB" → "smaps/Rss:kB 22416"
		for _, l := range strings.Split(string(rollup), "\n") {
			if f := strings.Fields(l); len(f) == 3 && f[2] == "kB" {
				fmt.Fprintf(&b, "smaps/%s%s %s\n", f[0], f[2], f[1])
			}
		}
	}
	return b.Bytes()
}
