//go:build linux

package testreap

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// reapWithin bounds the clean-up: a process that SIGKILL does not end in
// that time (stuck in the kernel) is named rather than waited for forever.
const reapWithin = 10 * time.Second

// forwarded are the signals a user or go test sends to end the run; the
// child gets them as if it had been started by go test itself.
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT, syscall.SIGHUP}

// warden runs the tests in a re-executed child and exits with its status;
// it returns, leaving the tests to run in this process, only when it cannot
// set up the child.
func warden() {
	// Pdeathsig fires when the thread that started the child ends, not the
	// process: that thread stays this goroutine's for good.
	runtime.LockOSThread()
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintln(os.Stderr, "testreap: not a child subreaper, so no warden:", err)
		return
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	child := &exec.Cmd{
		// /proc/self/exe is this binary even if its path is relative or gone.
		Path:        "/proc/self/exe",
		Args:        os.Args,
		Env:         append(os.Environ(), childEnv+"="+strconv.Itoa(os.Getpid())),
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	}
	if err := child.Start(); err != nil {
		signal.Stop(sigs)
		fmt.Fprintln(os.Stderr, "testreap: cannot start the tests in a child, so no warden:", err)
		return
	}
	go func() {
		// Process.Signal goes through a pidfd where there is one, so a
		// signal that comes after the child is reaped reaches no one else.
		for s := range sigs {
			_ = child.Process.Signal(s)
		}
	}()
	status := waitFor(child.Process.Pid)
	killed, survivors := reapAll()
	if len(killed) > 0 {
		fmt.Fprintf(os.Stderr, "testreap: killed %d processes the tests left running: %s\n", len(killed), names(killed))
	}
	if len(survivors) > 0 {
		fmt.Fprintf(os.Stderr, "testreap: %d processes outlived SIGKILL for %s: %s\n", len(survivors), reapWithin, names(survivors))
	}
	os.Exit(status)
}

// waitFor reaps the orphans re-parented to the warden while the child runs,
// and returns the child's exit status, 128+signal if a signal killed it.
func waitFor(pid int) int {
	for {
		var ws unix.WaitStatus
		got, err := unix.Wait4(-1, &ws, 0, nil)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			// Only ECHILD, which cannot happen while the child is ours.
			fmt.Fprintln(os.Stderr, "testreap: waiting for the tests:", err)
			return 1
		}
		if got != pid {
			continue
		}
		if ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ws.ExitStatus()
	}
}

// proc is one line of /proc/PID/stat, the parts the warden needs.
type proc struct {
	pid, ppid, pgid int
	comm            string
	zombie          bool
}

func (p proc) String() string { return p.comm + "[" + strconv.Itoa(p.pid) + "]" }

// reapAll SIGKILLs and reaps every process left under the warden. It kills
// only its own children (and the process groups they lead): their pids
// cannot be reused before the warden reaps them, so no stranger is hit. A
// child's children are re-parented to the warden when it dies, and the next
// round kills them, until wait4 says there is no child left.
func reapAll() (killed, survivors []proc) {
	self, ownGroup := os.Getpid(), unix.Getpgrp()
	seen := map[int]bool{}
	deadline := time.Now().Add(reapWithin)
	for {
		var alive []proc
		for _, p := range processes() {
			if p.ppid != self || p.zombie {
				continue
			}
			alive = append(alive, p)
			if !seen[p.pid] {
				seen[p.pid] = true
				killed = append(killed, named(p))
			}
			_ = unix.Kill(p.pid, unix.SIGKILL)
			// A group this child leads (setsid, a job of a shell) dies at
			// once, not one re-parenting round per generation.
			if p.pgid == p.pid && p.pgid != ownGroup {
				_ = unix.Kill(-p.pgid, unix.SIGKILL)
			}
		}
		for {
			got, err := unix.Wait4(-1, nil, unix.WNOHANG, nil)
			if err == unix.EINTR {
				continue
			}
			if err == unix.ECHILD {
				return killed, nil
			}
			if err != nil || got <= 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			return killed, alive
		}
		// Not a test waiting: the pause between rounds lets SIGKILL land.
		time.Sleep(2 * time.Millisecond)
	}
}

// processes reads every process's stat; one that ends meanwhile is skipped.
func processes() []proc {
	entries, _ := os.ReadDir("/proc")
	var ps []proc
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if p, ok := parseStat(pid, string(b)); ok {
			ps = append(ps, p)
		}
	}
	return ps
}

// parseStat reads "pid (comm) state ppid pgrp ...": comm may hold spaces and
// parentheses, so the fields start after the last ')'.
func parseStat(pid int, s string) (proc, bool) {
	open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || shut < open {
		return proc{}, false
	}
	f := strings.Fields(s[shut+1:])
	if len(f) < 3 {
		return proc{}, false
	}
	ppid, err1 := strconv.Atoi(f[1])
	pgid, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil {
		return proc{}, false
	}
	return proc{pid: pid, ppid: ppid, pgid: pgid, comm: s[open+1 : shut], zombie: f[0] == "Z"}, true
}

// named takes p's name from its argv[0], which says more than the kernel's
// comm: a shim started as /proc/self/exe is "exe" there.
func named(p proc) proc {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline")
	if arg0, _, _ := strings.Cut(string(b), "\x00"); arg0 != "" {
		p.comm = filepath.Base(arg0)
	}
	return p
}

// names lists the first few processes, enough to find the test that leaked.
func names(ps []proc) string {
	const most = 20
	var b strings.Builder
	for i, p := range ps {
		if i == most {
			fmt.Fprintf(&b, " and %d more", len(ps)-most)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.String())
	}
	return b.String()
}
