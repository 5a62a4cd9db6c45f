package daemon

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"sandtop/backend/shim"
	"sandtop/groupstate"
	"sandtop/wrapper"
)

// A group whose shim is gone (SIGKILL, a crash) while members of it live
// on is a shimless group: still the sandbox's work, so the daemon keeps
// listing it with the command and tag its state directory holds, lets it be
// signalled and torn down, and so keeps its state directory from being
// judged settled (and pruned). It is found when a followed shim goes away,
// and, after a restart, in state directories whose shim is dead while their
// group lives. It is forgotten once its group has no process left. Without
// a shim its leader's exit is published only when this process reaps it
// (see publishShimlessExit), and escapees that left its session are no
// longer traced to it.

// shimlessPoll is how often a shimless group is checked for emptiness:
// its record must go before the group id could be reused.
const shimlessPoll = 500 * time.Millisecond

// startSlack is how far apart two readings of one process's start time may
// be: /proc's boot time has whole seconds, and the wall clock moves.
const startSlack = 5 * time.Second

// keepShimless records the group of link, whose shim has gone, as shimless
// while any process is left in it.
func (d *Daemon) keepShimless(l *shimLink) {
	if d.isShuttingDown() || noProcessIn(l.pgid) {
		return
	}
	g := &shimLink{pgid: l.pgid, dir: l.dir, tag: l.tag, argv: l.argv}
	if !d.reg.addShimless(g) {
		return
	}
	d.log.Warn("group supervisor gone; the group is kept as a plain group", "pgid", g.pgid, "dir", g.dir)
	go d.watchShimless(g)
}

// watchShimless forgets g once its group is empty, or the daemon stops.
func (d *Daemon) watchShimless(g *shimLink) {
	t := time.NewTicker(shimlessPoll)
	defer t.Stop()
	for {
		select {
		case <-d.done:
			return
		case <-t.C:
		}
		if noProcessIn(g.pgid) {
			d.reg.removeShimless(g)
			d.log.Info("shimless group ended", "pgid", g.pgid, "dir", g.dir)
			return
		}
	}
}

// adoptShimless takes up the group of state directory dir, whose shim is
// gone, when processes of it still run: it is recorded as shimless. The
// group is the one the pid file names, recognised by what the shim made
// of it (its own session, pid = pgid = sid) and by start times no earlier
// than the pid file, which the shim wrote as the program started, so that
// a reused group id is not taken for it.
func (d *Daemon) adoptShimless(sd *shim.StateDir, dir string, table func() procTable) error {
	pidFile, err := sd.Open(wrapper.PidFile)
	if err != nil {
		return err
	}
	var st unix.Stat_t
	err = unix.Fstat(int(pidFile.Fd()), &st)
	b := readCapped(pidFile, 64)
	_ = pidFile.Close()
	if err != nil {
		return err
	}
	pgid, err := wrapper.ParsePgid(string(b))
	if err != nil {
		return err
	}
	if d.reg.shimByPgid(pgid) != nil || d.reg.shimlessByPgid(pgid) != nil {
		return nil
	}
	written := time.Unix(st.Mtim.Unix())
	if !groupOfShim(table(), pgid, written) {
		return fmt.Errorf("no process of group %d is left", pgid)
	}
	g := &shimLink{pgid: pgid, dir: dir}
	if f, err := sd.Open(wrapper.ArgvFile); err == nil {
		g.argv = wrapper.ParseArgv(string(readCapped(f, stateFileCaps[wrapper.ArgvFile])))
		_ = f.Close()
	}
	if f, err := sd.Open(wrapper.TagFile); err == nil {
		if tag := trimLine(readCapped(f, stateFileCaps[wrapper.TagFile])); tag != "" {
			g.tag = &tag
		}
		_ = f.Close()
	}
	if !d.reg.addShimless(g) {
		return nil
	}
	d.log.Warn("group adopted without its supervisor, which is gone", "pgid", pgid, "dir", dir)
	go d.watchShimless(g)
	return nil
}

// groupOfShim says whether group pgid in t is one a shim started at
// about written: a live member leads or shares its session, and none
// started before it; a live leader started then.
func groupOfShim(t procTable, pgid int, written time.Time) bool {
	if leader, ok := t.stats[pgid]; ok && leader.pgid == pgid {
		at := startTime(leader)
		if at.Before(written.Add(-startSlack)) || at.After(written.Add(startSlack)) {
			return false
		}
	}
	live := false
	for _, st := range t.stats {
		if st.pgid != pgid {
			continue
		}
		if st.sid != pgid || startTime(st).Before(written.Add(-startSlack)) {
			return false
		}
		live = live || groupstate.ProcLive(st.state)
	}
	return live
}

func readCapped(f *os.File, limit int) []byte {
	b, _ := io.ReadAll(io.LimitReader(f, int64(limit)))
	return b
}

func trimLine(b []byte) string {
	s := string(b)
	for len(s) > 0 && (s[len(s)-1] == '\n' || s[len(s)-1] == '\r') {
		s = s[:len(s)-1]
	}
	return s
}

// checkNotShim refuses a signal to a shim (a group's, or the spare): a
// shim is bookkeeping, never the sandbox's work, and its group holds it alone.
func (d *Daemon) checkNotShim(pid int) error {
	if l := d.reg.shimByPid(pid); l != nil {
		return fmt.Errorf("pid %d is the supervisor (shim) of process group %d, not a process of the sandbox: signal group %d instead", pid, l.pgid, l.pgid)
	}
	if d.reg.isShimChild(pid) {
		return fmt.Errorf("pid %d is one of the daemon's group supervisors (shims), not a process of the sandbox", pid)
	}
	return nil
}

// killShimless ends every shimless group (daemon stop).
func (d *Daemon) killShimless() {
	for _, l := range d.reg.shimlessGroups() {
		_ = killGroup(l.pgid, syscall.SIGKILL)
	}
}

// publishShimlessExit writes the exit facts of a shimless group's leader,
// reaped by this process, as its shim would have: the signal (and core) or
// the code, exit-code last. A status already there is kept.
func (d *Daemon) publishShimlessExit(l *shimLink, ws unix.WaitStatus) {
	sd, err := shim.OpenStateDir(l.dir)
	if err != nil {
		return
	}
	defer sd.Close()
	if f, err := sd.Open(wrapper.ExitCodeFile); err == nil {
		_ = f.Close()
		return
	}
	code := ws.ExitStatus()
	if ws.Signaled() {
		code = 128 + int(ws.Signal())
		err = sd.WriteLine(wrapper.SignalFile, strconv.Itoa(int(ws.Signal())))
		if err == nil && ws.CoreDump() {
			err = sd.WriteLine(wrapper.CoreFile, "1")
		}
	}
	if err == nil {
		err = sd.WriteLine(wrapper.ExitCodeFile, strconv.Itoa(code))
	}
	if err != nil {
		d.log.Warn("exit of a shimless group's leader not published", "pgid", l.pgid, "dir", l.dir, "err", err)
		return
	}
	d.log.Info("shimless group's leader reaped", "pgid", l.pgid, "code", code)
}
