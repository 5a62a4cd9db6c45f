package uisource

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/ui"
	"sandtop/wrapper"
)

// Stock envd (or our daemon with Compat) has no Supervisor: the table is
// polled. Each poll is one ps through Process.Start, one Process.List (for
// the pids and tags the daemon started) and the seam's ListTerminals.

const (
	// minCompatInterval keeps polling sane: every poll forks in the sandbox.
	minCompatInterval = time.Second
	pollTimeout       = 10 * time.Second
	// compatStrikes is how many failed polls in a row count as a loss when
	// the failures are not plainly a dead connection.
	compatStrikes = 3
)

type compatFeed struct {
	s        *backendSource
	interval time.Duration
	due      time.Time
	strikes  int
	// exact argv of wrapper processes, read once from /proc per pid.
	argv  map[int]exactArgv
	terms []ui.Terminal
}

func (s *backendSource) openCompatFeed() *compatFeed {
	return &compatFeed{s: s, interval: max(s.opts.Interval, minCompatInterval), argv: map[int]exactArgv{}}
}

// exactArgv is a process's argv from /proc, and how ps rendered it.
type exactArgv struct {
	rendered string
	exact    []string
}

func (f *compatFeed) close() {}

// next waits for the next poll. Polls start no closer together than the
// interval, nor than twice the time the last one took, so a slow sandbox
// is never kept busy by its own monitor.
func (f *compatFeed) next(ctx context.Context) (liveTable, error) {
	for {
		if d := time.Until(f.due); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return liveTable{}, ctx.Err()
			}
		}
		start := time.Now()
		table, err := f.poll(ctx)
		f.due = start.Add(max(f.interval, 2*time.Since(start)))
		if err == nil {
			f.strikes = 0
			return table, nil
		}
		if ctx.Err() != nil {
			return liveTable{}, ctx.Err()
		}
		f.strikes++
		if daemonUnreachable(err) || f.strikes >= compatStrikes {
			return liveTable{}, err
		}
	}
}

func (f *compatFeed) poll(ctx context.Context) (liveTable, error) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	rows, taken, err := f.s.runPS(ctx)
	if err != nil {
		return liveTable{}, err
	}
	started, err := f.s.c.Process.List(ctx, connect.NewRequest(&process.ListRequest{}))
	if err != nil {
		return liveTable{}, fmt.Errorf("list processes: %w", err)
	}
	tags := map[int]string{}
	for _, p := range started.Msg.GetProcesses() {
		tags[int(p.GetPid())] = p.GetTag()
	}
	f.exactArgv(ctx, rows)
	t := liveTable{taken: taken, groups: groupRows(rows, tags)}
	t.terminals = f.terminals(ctx, rows)
	return t, nil
}

// exactArgv replaces the space-split argv of wrapper processes with the
// exact one from /proc (cached per pid), so wrapper folding can read the
// state dir and the user's argv.
func (f *compatFeed) exactArgv(ctx context.Context, rows []psRow) {
	seen := map[int]bool{}
	for i := range rows {
		r := &rows[i]
		seen[r.PID] = true
		rendered := strings.Join(r.Argv, " ")
		if c, ok := f.argv[r.PID]; ok && c.rendered == rendered {
			r.Argv = c.exact // the same process: a reused pid renders differently
			continue
		}
		if !wrapper.MayBeWrapper(r.Argv) {
			continue
		}
		b, err := f.s.rt.Control().ReadFile(ctx, "/proc/"+strconv.Itoa(r.PID)+"/cmdline")
		if err != nil || len(b) == 0 {
			continue // gone meanwhile, or unreadable: keep ps's rendering
		}
		r.Argv = strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
		f.argv[r.PID] = exactArgv{rendered: rendered, exact: r.Argv}
	}
	for pid := range f.argv {
		if !seen[pid] {
			delete(f.argv, pid)
		}
	}
}

// groupRows groups ps rows by process group. A group whose leader the
// daemon started gets that pid as its leader pid (its output can be
// streamed) and the tag it was started with. Kernel threads and our own ps
// are left out.
func groupRows(rows []psRow, tags map[int]string) []ui.Group {
	byPgid := map[int]*ui.Group{}
	var order []int
	for _, r := range rows {
		if r.PGID <= 0 || isOurPS(r.Argv) {
			continue
		}
		g := byPgid[r.PGID]
		if g == nil {
			g = &ui.Group{PGID: r.PGID, SID: r.SID}
			byPgid[r.PGID] = g
			order = append(order, r.PGID)
		}
		g.Members = append(g.Members, r.Process)
		if r.PID == r.PGID {
			g.PTY = r.TTY != ""
			if tag, ok := tags[r.PID]; ok {
				g.LeaderPID, g.Tag = r.PID, tag
			}
		}
	}
	sort.Ints(order)
	out := make([]ui.Group, 0, len(order))
	for _, pgid := range order {
		g := byPgid[pgid]
		g.Started = g.StartedAt()
		out = append(out, *g)
	}
	return out
}

func isOurPS(argv []string) bool {
	return len(argv) > 2 && argv[0] == "ps" && argv[1] == "-e" && argv[2] == "-ww"
}

// terminals lists sandtop's terminals through the seam (ListTerminals) and
// completes each from the ps table: session, foreground group, start.
// Stock envd does not report PTY sizes, so Rows and Cols stay 0. A failed
// read keeps the previous list.
func (f *compatFeed) terminals(ctx context.Context, rows []psRow) []ui.Terminal {
	infos, err := f.s.rt.ListTerminals(ctx)
	if err != nil {
		return f.terms
	}
	byPid := map[int]psRow{}
	for _, r := range rows {
		byPid[r.PID] = r
	}
	f.terms = make([]ui.Terminal, 0, len(infos))
	for _, info := range infos {
		t := ui.Terminal{PID: info.Pid, SID: info.Pid, Argv: info.Argv, Tag: "sandtop-terminal:" + info.ID, Rows: info.Rows, Cols: info.Cols}
		if r, ok := byPid[info.Pid]; ok {
			t.SID, t.Started = r.SID, r.Started
			if r.TPGID > 1 {
				t.ForegroundPGID = r.TPGID
			}
		}
		f.terms = append(f.terms, t)
	}
	return f.terms
}
