package seam

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/seam/control"
	"sandtop/sandbox"
	"sandtop/wrapper"
)

// Stock envd (or our daemon with Compat) has no Supervisor: the table is
// polled. Each poll is one ps (or the supervisor's table) through
// Process.Start and one Process.List, for the pids and tags the daemon
// started, its terminals among them.

const (
	// minCompatInterval keeps polling sane: every poll forks in the sandbox.
	minCompatInterval = time.Second
	pollTimeout       = 10 * time.Second
	// compatStrikes is how many failed polls in a row count as a loss when
	// the failures are not plainly a dead connection.
	compatStrikes = 3
)

type compatFeed struct {
	r        *Runtime
	interval time.Duration
	due      time.Time
	strikes  int
	// exact argv of wrapper processes, read once from /proc per pid.
	argv  map[int]exactArgv
	terms []sandbox.Terminal
}

func openCompatFeed(r *Runtime, interval time.Duration) *compatFeed {
	return &compatFeed{r: r, interval: max(interval, minCompatInterval), argv: map[int]exactArgv{}}
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
		if unreachable(err) || f.strikes >= compatStrikes {
			return liveTable{}, err
		}
	}
}

func (f *compatFeed) poll(ctx context.Context) (liveTable, error) {
	ctx, cancel := context.WithTimeout(ctx, pollTimeout)
	defer cancel()
	// The table and the daemon's list of what it started (its terminals
	// among them) are two round trips, each of which grows with the
	// groups: both at once.
	var started *connect.Response[process.ListResponse]
	var listErr, termErr error
	var infos []TerminalInfo
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		started, listErr = f.r.proc.List(ctx, connect.NewRequest(&process.ListRequest{}))
		if listErr != nil {
			termErr = listErr
			return
		}
		infos = f.r.terminalBase().FromProcesses(ctx, started.Msg.GetProcesses())
	}()
	rows, taken, err := f.r.processTable(ctx)
	wg.Wait()
	if err != nil {
		return liveTable{}, err
	}
	if listErr != nil {
		return liveTable{}, fmt.Errorf("list processes: %w", listErr)
	}
	// A copy: exactArgv rewrites rows, and within OneTable the table is
	// shared with readers running at the same time (Snapshot's scan).
	rows = slices.Clone(rows)
	tags := map[int]string{}
	for _, p := range started.Msg.GetProcesses() {
		tags[int(p.GetPid())] = p.GetTag()
	}
	f.exactArgv(ctx, rows)
	t := liveTable{taken: taken, groups: groupRows(rows, tags)}
	t.terminals = f.terminals(infos, termErr, rows)
	return t, nil
}

// exactArgv replaces the space-split argv of wrapper processes with the
// exact one from /proc (cached per pid), so wrapper folding can read the
// state dir and the user's argv. The new ones are read in one command.
func (f *compatFeed) exactArgv(ctx context.Context, rows []ProcessRow) {
	seen := map[int]bool{}
	var want []string
	for i := range rows {
		r := &rows[i]
		seen[r.Pid] = true
		// Joined only for the pids read before: a thousand rows a poll.
		if c, ok := f.argv[r.Pid]; ok && c.rendered == strings.Join(r.Argv, " ") {
			r.Argv = c.exact // the same process: a reused pid renders differently
			continue
		}
		if wrapper.MayBeWrapper(r.Argv) {
			want = append(want, strconv.Itoa(r.Pid))
		}
	}
	for pid := range f.argv {
		if !seen[pid] {
			delete(f.argv, pid)
		}
	}
	if len(want) == 0 {
		return
	}
	read, err := f.r.readCmdlines(ctx, want)
	if err != nil {
		return // keep ps's rendering; the next poll tries again
	}
	for i := range rows {
		r := &rows[i]
		if exact, ok := read[r.Pid]; ok {
			f.argv[r.Pid] = exactArgv{rendered: strings.Join(r.Argv, " "), exact: exact}
			r.Argv = exact
		}
	}
}

// cmdlinesScript prints, for each pid given that is still there, the pid,
// its argument count and its arguments from /proc/<pid>/cmdline, each
// NUL-terminated. Builtins only: a thousand pids cost no fork.
const cmdlinesScript = `for p; do
	mapfile -d '' -t a 2>/dev/null <"/proc/$p/cmdline" || continue
	[ "${#a[@]}" -gt 0 ] || continue
	printf '%s\0%d\0' "$p" "${#a[@]}"
	printf '%s\0' "${a[@]}"
done
exit 0`

// readCmdlines reads the exact argv of several processes in one command.
func (r *Runtime) readCmdlines(ctx context.Context, pids []string) (map[int][]string, error) {
	res, err := r.runner.Run(ctx, cmdlinesScript, pids, nil)
	if err != nil {
		return nil, err
	}
	out := map[int][]string{}
	f := strings.Split(string(res.Stdout), "\x00")
	for i := 0; i+1 < len(f); {
		pid, perr := strconv.Atoi(f[i])
		n, nerr := strconv.Atoi(f[i+1])
		if perr != nil || nerr != nil || n < 1 || i+2+n > len(f) {
			break // cut short: keep what was whole
		}
		out[pid] = append([]string(nil), f[i+2:i+2+n]...)
		i += 2 + n
	}
	return out, nil
}

// groupRows groups ps rows by process group. A group whose leader the
// daemon started gets that pid as its leader pid (its output can be
// streamed) and the tag it was started with. Kernel threads and our own ps
// are left out.
func groupRows(rows []ProcessRow, tags map[int]string) []sandbox.Group {
	byPgid := map[int]*sandbox.Group{}
	var order []int
	for _, r := range rows {
		if r.Pgid <= 0 || isOurPS(r.Argv) {
			continue
		}
		g := byPgid[r.Pgid]
		if g == nil {
			g = &sandbox.Group{PGID: r.Pgid, SID: r.Sid}
			byPgid[r.Pgid] = g
			order = append(order, r.Pgid)
		}
		g.Members = append(g.Members, sandbox.Process{
			PID: r.Pid, PPID: r.Ppid, PGID: r.Pgid, SID: r.Sid, State: r.State, Argv: r.Argv, Comm: r.Comm,
			TTY: r.TTY, Started: r.Started, CPUPercent: r.CPUPercent, RSSBytes: r.RSSBytes,
		})
		if r.Pid == r.Pgid {
			g.PTY = r.TTY != ""
			if tag, ok := tags[r.Pid]; ok {
				g.LeaderPID, g.Tag = r.Pid, tag
			}
		}
	}
	sort.Ints(order)
	out := make([]sandbox.Group, 0, len(order))
	for _, pgid := range order {
		out = append(out, *byPgid[pgid])
	}
	return out
}

func isOurPS(argv []string) bool {
	return len(argv) > 2 && argv[0] == "ps" && argv[1] == "-e" && argv[2] == "-ww"
}

// terminals lists sandtop's terminals through the seam and completes each
// from the ps table: session, foreground group, start. Stock envd does not
// report PTY sizes, so Rows and Cols stay 0. A failed read keeps the
// previous list.
func (f *compatFeed) terminals(infos []TerminalInfo, err error, rows []ProcessRow) []sandbox.Terminal {
	if err != nil {
		return f.terms
	}
	byPid := map[int]ProcessRow{}
	for _, r := range rows {
		byPid[r.Pid] = r
	}
	f.terms = make([]sandbox.Terminal, 0, len(infos))
	for _, info := range infos {
		t := sandbox.Terminal{PID: info.Pid, SID: info.Pid, Sandtop: true, ID: info.ID, Tag: info.Tag, Argv: info.Argv, Rows: info.Rows, Cols: info.Cols}
		if r, ok := byPid[info.Pid]; ok {
			t.SID, t.Started = r.Sid, r.Started
			if r.Tpgid > 1 {
				t.ForegroundPGID = r.Tpgid
			}
		}
		f.terms = append(f.terms, t)
	}
	return f.terms
}

// processTable reads the whole process table with one ps run, on stock envd
// (sandtop's daemon serves its table grouped, through the extension, and
// answers control.ErrUnsupported here). taken is when ps ran.
func (r *Runtime) processTable(ctx context.Context) (rows []ProcessRow, taken time.Time, err error) {
	if _, ok := r.control.(control.Compat); !ok {
		return nil, time.Time{}, control.ErrUnsupported
	}
	return control.ReadProcessTable(ctx, r.runner)
}
