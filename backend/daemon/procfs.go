package daemon

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// clockTicks is USER_HZ, which Linux fixes at 100 for /proc.
const clockTicks = 100

// procStat is what the daemon reads from /proc/<pid>/stat.
type procStat struct {
	pid, ppid, pgid, sid, tpgid int
	state                       string
	comm                        string
	ttyNr                       int
	cpuTicks                    uint64 // utime + stime
	startTicks                  uint64 // since boot
	rssPages                    int64
	// stale: kept from an earlier read of a watch (see watchTable).
	stale bool
}

// readStat parses /proc/<pid>/stat. comm may hold spaces and parentheses,
// so fields are counted from the last ')'.
//
// It costs three system calls (open, read, close) into a stack buffer: a
// snapshot reads one per process, thousands per second while someone
// watches, and os.ReadFile's stat and allocation were a third of that.
func readStat(pid int) (procStat, error) {
	var path [32]byte
	p := append(strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10), "/stat"...)
	fd, err := unix.Open(string(p), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, err
	}
	var buf [1024]byte
	n, err := unix.Read(fd, buf[:])
	_ = unix.Close(fd)
	if err != nil {
		return procStat{}, err
	}
	return parseStat(pid, buf[:max(n, 0)])
}

func parseStat(pid int, b []byte) (procStat, error) {
	lp, rp := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if lp < 0 || rp < lp {
		return procStat{}, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[rp+1:]))
	// f[0] is field 3 (state); field n is f[n-3].
	if len(f) < 22 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	num := func(n int) int64 { v, _ := strconv.ParseInt(f[n-3], 10, 64); return v }
	return procStat{
		pid:        pid,
		comm:       string(b[lp+1 : rp]),
		state:      f[0],
		ppid:       int(num(4)),
		pgid:       int(num(5)),
		sid:        int(num(6)),
		ttyNr:      int(num(7)),
		tpgid:      int(num(8)),
		cpuTicks:   uint64(num(14) + num(15)),
		startTicks: uint64(num(22)),
		rssPages:   num(24),
	}, nil
}

// allPids lists the numeric entries of /proc.
func allPids() []int {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	pids := make([]int, 0, len(names))
	for _, n := range names {
		if pid, err := strconv.Atoi(n); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// cmdline returns argv; empty for zombies and kernel threads.
func cmdline(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil || len(b) == 0 {
		return nil
	}
	b = bytes.TrimRight(b, "\x00")
	return strings.Split(string(b), "\x00")
}

// procUID is the owner of /proc/<pid>, i.e. the effective uid.
func procUID(pid int) uint32 {
	fi, err := os.Stat("/proc/" + strconv.Itoa(pid))
	if err != nil {
		return 0
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Uid
	}
	return 0
}

// ttyName renders a tty_nr as a name like "pts/3"; empty for none.
func ttyName(nr int) string {
	if nr == 0 {
		return ""
	}
	major := (nr >> 8) & 0xfff
	minor := (nr & 0xff) | ((nr >> 12) & 0xfff00)
	switch {
	case major >= 136 && major <= 143:
		return "pts/" + strconv.Itoa((major-136)*256+minor)
	case major == 4 && minor < 64:
		return "tty" + strconv.Itoa(minor)
	case major == 4:
		return "ttyS" + strconv.Itoa(minor-64)
	case major == 5 && minor == 0:
		return "tty"
	case major == 5 && minor == 1:
		return "console"
	}
	return fmt.Sprintf("%d:%d", major, minor)
}

var (
	bootOnce sync.Once
	bootTime time.Time
)

// boot returns the system boot time from /proc/stat's btime.
func boot() time.Time {
	bootOnce.Do(func() {
		b, err := os.ReadFile("/proc/stat")
		if err != nil {
			return
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "btime "); ok {
				if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
					bootTime = time.Unix(s, 0)
				}
			}
		}
	})
	return bootTime
}

func startTime(st procStat) time.Time {
	return boot().Add(time.Duration(st.startTicks) * time.Second / clockTicks)
}
