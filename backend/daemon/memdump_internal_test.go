package daemon

import (
	"strconv"
	"strings"
	"testing"
)

// A memory dump names the runtime's classes and the kernel's view with
// numbers, one "name value" a line, as bench -sdk-memory reads them.
func TestMemoryReportLines(t *testing.T) {
	got := map[string]uint64{}
	for _, l := range strings.Split(strings.TrimSpace(string(memoryReport())), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			t.Fatalf("line %q is not \"name value\"", l)
		}
		v, err := strconv.ParseUint(f[1], 10, 64)
		if err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		got[f[0]] = v
	}
	for _, name := range []string{"/memory/classes/heap/objects:bytes", "/memory/classes/metadata/mspan/inuse:bytes", "/sched/goroutines:goroutines", "smaps/Rss:kB", "smaps/Anonymous:kB"} {
		if got[name] == 0 {
			t.Errorf("%s: %d, want a positive figure (report: %v)", name, got[name], got)
		}
	}
}
