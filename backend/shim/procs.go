package shim

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"

	"sandtop/groupstate"
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
	if len(f) < 20 || !groupstate.ProcLive(f[0]) {
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

// Descendants lists the live descendants of pid (not pid itself). It walks
// the tree through /proc/<pid>/task/<tid>/children, so its cost follows the
// tree, not the machine: every shim calls it when its program ends, and a
// scan of all of /proc per shim made tearing down 1,000 groups take
// seconds. Without those files (a kernel built without them) it reads every
// process once.
func Descendants(pid int) []Proc {
	var out []Proc
	ok := WalkDescendants(pid, func(c int) bool {
		p, err := ReadProc(c)
		if err != nil {
			return false // gone, or a zombie: not live, and childless
		}
		out = append(out, p)
		return true
	})
	if !ok {
		return descendantsByScan(pid)
	}
	return out
}

// WalkDescendants calls visit once for each descendant of pid (not pid
// itself), parents before children, through the children files; a visit
// that returns false skips that process's children. ok is false when the
// kernel has no children files (nothing was visited then).
func WalkDescendants(pid int, visit func(pid int) bool) (ok bool) {
	kids, ok := ChildrenOf(pid)
	if !ok {
		return false
	}
	seen := map[int]bool{pid: true}
	for len(kids) > 0 {
		c := kids[0]
		kids = kids[1:]
		if seen[c] {
			continue
		}
		seen[c] = true
		if visit(c) {
			more, _ := ChildrenOf(c)
			kids = append(kids, more...)
		}
	}
	return true
}

// ChildrenOf reads pid's children from every thread's children file (a
// child belongs to the thread that forked it). ok is false when the kernel
// has no such files.
func ChildrenOf(pid int) (kids []int, ok bool) {
	base := "/proc/" + strconv.Itoa(pid) + "/task"
	d, err := os.Open(base)
	if err != nil {
		return nil, true // gone: no children
	}
	tids, _ := d.Readdirnames(-1)
	_ = d.Close()
	for _, tid := range tids {
		b, err := os.ReadFile(base + "/" + tid + "/children")
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat(base + "/" + tid); serr == nil {
				return nil, false // the thread is there, the file is not
			}
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(f); err == nil {
				kids = append(kids, n)
			}
		}
	}
	return kids, true
}

// descendantsByScan is Descendants from one read of every process.
func descendantsByScan(pid int) []Proc {
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
