package daemon

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// foregroundPgid reads the terminal's foreground process group from the PTY
// master.
func (p *proc) foregroundPgid() (int, error) {
	return foregroundOf(p.pty)
}

// groupWaitsOnTerminal reports whether process group pgid is blocked reading
// the terminal tty (a path like /dev/pts/3). The rule: some thread of some
// member sleeps (state S) in
//   - a read-family call (read, readv, pread64, preadv) whose fd is tty, or
//   - a wait-family call (select, pselect6, poll, ppoll, epoll_wait,
//     epoll_pwait, epoll_pwait2) while the member's fd 0 is tty
//     (the fd sets are not visible in /proc; a program polling with the
//     terminal on stdin is taken to be waiting for it).
//
// So `cat` and a shell at its prompt count as waiting; `sleep` and a busy
// loop do not. Reading .../syscall needs ptrace access, which the daemon has
// over processes it started (same user, or root).
func groupWaitsOnTerminal(pgid int, tty string) bool {
	if pgid <= 0 || tty == "" {
		return false
	}
	for _, pid := range allPids() {
		st, err := readStat(pid)
		if err != nil || st.pgid != pgid {
			continue
		}
		if memberWaitsOnTerminal(pid, tty) {
			return true
		}
	}
	return false
}

func memberWaitsOnTerminal(pid int, tty string) bool {
	base := "/proc/" + strconv.Itoa(pid)
	tasks, _ := filepath.Glob(base + "/task/*")
	for _, task := range tasks {
		b, err := os.ReadFile(task + "/stat")
		if err != nil {
			continue
		}
		st, err := parseStat(pid, b)
		if err != nil || st.state != "S" {
			continue
		}
		nr, fd, ok := blockedSyscall(task)
		if !ok {
			continue
		}
		switch {
		case readSyscalls[nr]:
			if fdIsTerminal(base, fd, tty) {
				return true
			}
		case waitSyscalls[nr]:
			if fdIsTerminal(base, 0, tty) {
				return true
			}
		}
	}
	return false
}

// blockedSyscall parses /proc/<pid>/task/<tid>/syscall: "nr arg1 ...".
func blockedSyscall(task string) (nr int, fd int, ok bool) {
	b, err := os.ReadFile(task + "/syscall")
	if err != nil {
		return 0, 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, 0, false // "running", or "-1 sp pc" (not in a syscall)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 0 {
		return 0, 0, false
	}
	a, err := strconv.ParseUint(strings.TrimPrefix(f[1], "0x"), 16, 64)
	if err != nil {
		return 0, 0, false
	}
	return n, int(int32(a)), true
}

func fdIsTerminal(procDir string, fd int, tty string) bool {
	target, err := os.Readlink(procDir + "/fd/" + strconv.Itoa(fd))
	return err == nil && target == tty
}
