package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// sandboxMetrics is envd's GET /metrics answer.
type sandboxMetrics struct {
	Timestamp   int64   `json:"ts"`
	CPUCount    uint32  `json:"cpu_count"`
	CPUUsedPct  float32 `json:"cpu_used_pct"`
	MemTotalMiB uint64  `json:"mem_total_mib"`
	MemUsedMiB  uint64  `json:"mem_used_mib"`
	MemTotal    uint64  `json:"mem_total"`
	MemUsed     uint64  `json:"mem_used"`
	MemCache    uint64  `json:"mem_cache"`
	DiskUsed    uint64  `json:"disk_used"`
	DiskTotal   uint64  `json:"disk_total"`
}

// cpuTimes is the machine's busy and total CPU time from /proc/stat; the
// CPU use /metrics reports is the busy share since the previous call (since
// boot for the first), as envd's is.
type cpuTimes struct {
	mu          sync.Mutex
	busy, total uint64
}

var lastCPU cpuTimes

func (d *Daemon) getMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	m, err := readMetrics()
	if err != nil {
		d.log.Warn("metrics", "err", err)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = fmt.Fprintf(w, "read metrics: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(m)
}

func readMetrics() (sandboxMetrics, error) {
	m := sandboxMetrics{Timestamp: time.Now().Unix(), CPUCount: uint32(runtime.NumCPU())}
	pct, err := cpuUsedPercent()
	if err != nil {
		return m, err
	}
	m.CPUUsedPct = float32(math.Round(pct*100) / 100)
	mem, err := readMeminfo()
	if err != nil {
		return m, err
	}
	// "used" as free(1) and envd count it: not free, buffers or cache.
	m.MemTotal = mem["MemTotal"]
	m.MemCache = mem["Cached"] + mem["SReclaimable"]
	used := int64(m.MemTotal) - int64(mem["MemFree"]) - int64(mem["Buffers"]) - int64(m.MemCache)
	m.MemUsed = uint64(max(used, 0))
	m.MemTotalMiB, m.MemUsedMiB = m.MemTotal>>20, m.MemUsed>>20
	var st unix.Statfs_t
	if err := unix.Statfs("/", &st); err != nil {
		return m, fmt.Errorf("statfs /: %w", err)
	}
	m.DiskTotal = st.Blocks * uint64(st.Bsize)
	m.DiskUsed = m.DiskTotal - st.Bavail*uint64(st.Bsize)
	return m, nil
}

func cpuUsedPercent() (float64, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: unexpected first line %q", clip(string(line)))
	}
	var total, idle uint64
	for i, s := range f[1:] {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %q is not a number", clip(s))
		}
		if i == 8 || i == 9 { // guest time is already counted in user time
			continue
		}
		total += n
		if i == 3 || i == 4 { // idle, iowait
			idle += n
		}
	}
	busy := total - idle
	lastCPU.mu.Lock()
	db, dt := busy-lastCPU.busy, total-lastCPU.total
	if busy < lastCPU.busy || total <= lastCPU.total {
		db, dt = busy, total
	}
	lastCPU.busy, lastCPU.total = busy, total
	lastCPU.mu.Unlock()
	if dt == 0 {
		return 0, nil
	}
	return 100 * float64(db) / float64(dt), nil
}

// readMeminfo reads /proc/meminfo in bytes.
func readMeminfo() (map[string]uint64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if len(fields) > 1 && fields[1] == "kB" {
			n <<= 10
		}
		out[k] = n
	}
	return out, sc.Err()
}
