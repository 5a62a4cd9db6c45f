package shim

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
)

// Proc is one process as /proc shows it.
type Proc struct {
	Pid, Ppid, Pgid, Sid int
	Comm                 string
	StartTicks           uint64
}

// ReadProc parses /proc/<pid>/stat (comm may hold spaces and parentheses,
// so fields are counted from the last ')').
func ReadProc(pid int) (Proc, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Proc{}, err
	}
	lp, rp := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if lp < 0 || rp < lp {
		return Proc{}, errors.New("malformed stat")
	}
	f := strings.Fields(string(b[rp+1:]))
	if len(f) < 20 || f[0] == "Z" || f[0] == "X" {
		return Proc{}, errors.New("not a live process")
	}
	num := func(n int) uint64 { v, _ := strconv.ParseUint(f[n-3], 10, 64); return v }
	return Proc{Pid: pid, Ppid: int(num(4)), Pgid: int(num(5)), Sid: int(num(6)), Comm: string(b[lp+1 : rp]), StartTicks: num(22)}, nil
}

// StartTicks is a process's start time in clock ticks since boot: with the
// pid it names one process for good.
func StartTicks(pid int) (uint64, error) {
	p, err := ReadProc(pid)
	return p.StartTicks, err
}

// Descendants lists the live descendants of pid (not pid itself).
func Descendants(pid int) []Proc {
	d, err := os.Open("/proc")
	if err != nil {
		return nil
	}
	names, _ := d.Readdirnames(-1)
	_ = d.Close()
	children := map[int][]Proc{}
	for _, n := range names {
		id, err := strconv.Atoi(n)
		if err != nil {
			continue
		}
		if p, err := ReadProc(id); err == nil {
			children[p.Ppid] = append(children[p.Ppid], p)
		}
	}
	var out []Proc
	var walk func(int)
	walk = func(p int) {
		for _, c := range children[p] {
			out = append(out, c)
			walk(c.Pid)
		}
	}
	walk(pid)
	return out
}
