package control

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"sandtop/wrapper"
)

// Compat implements Plane with ordinary commands run through
// process.Process/Start, for daemons without the extension (stock envd).
// It needs ps (procps), kill, cat, ls and rm in the sandbox.
type Compat struct {
	Runner Runner
	// Batch, when set, coalesces concurrent table reads and signals (see
	// NewCompat).
	Batch *Batch
}

func (c Compat) Kind() string { return "compat" }

func (c Compat) Processes(ctx context.Context) ([]ProcessEntry, error) {
	if _, shared := ctx.Value(oneTableKey{}).(*tableMemo); shared {
		rows, _, err := ReadProcessTable(ctx, c.Runner)
		if err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
		out := make([]ProcessEntry, len(rows))
		for i, r := range rows {
			out[i] = ProcessEntry{Pid: r.Pid, Pgid: r.Pgid, Sid: r.Sid, State: r.State}
		}
		return out, nil
	}
	if c.Batch != nil {
		return c.batchedProcesses(ctx)
	}
	return c.readProcesses(ctx)
}

// readProcesses is one ps of every process's ids and state.
func (c Compat) readProcesses(ctx context.Context) ([]ProcessEntry, error) {
	r, err := c.Runner.Run(ctx, `exec ps -e -o pid= -o pgid= -o sid= -o stat=`, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	if r.ExitCode != 0 {
		return nil, fmt.Errorf("list processes: ps exited %d: %s", r.ExitCode, ClipText(r.Stderr))
	}
	return ParsePsTable(r.Stdout)
}

// AgentStateDirs reads the leaders' command lines from ps (argv joined by
// spaces, which the state directory's path survives).
func (c Compat) AgentStateDirs(ctx context.Context) ([]string, error) {
	if _, shared := ctx.Value(oneTableKey{}).(*tableMemo); shared {
		rows, _, err := ReadProcessTable(ctx, c.Runner)
		if err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
		var dirs []string
		for _, r := range rows {
			if dir, ok := wrapper.AgentStateDir([]string{r.args}); ok && r.Pid == r.Pgid {
				dirs = append(dirs, dir)
			}
		}
		return sortedUnique(dirs), nil
	}
	// Streamed: the bash wrapper's processes carry its script in their argv.
	var t tableReader
	r, err := c.Runner.Stream(ctx, `exec ps -e -ww -o pid= -o pgid= -o args=`, nil, t.write)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	if r.ExitCode != 0 {
		return nil, fmt.Errorf("list processes: ps exited %d: %s", r.ExitCode, ClipText(r.Stderr))
	}
	return agentDirsInPs([]byte(strings.Join(t.finish(), "\n"))), nil
}

// agentDirsInPs picks the agent state directories out of "pid pgid args"
// rows whose pid leads its group.
func agentDirsInPs(out []byte) []string {
	var dirs []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != f[1] {
			continue
		}
		args := strings.TrimLeft(line, " \t")
		for range 2 { // skip pid and pgid
			args = strings.TrimLeft(args[strings.IndexAny(args, " \t"):], " \t")
		}
		if dir, ok := wrapper.AgentStateDir([]string{args}); ok {
			dirs = append(dirs, dir)
		}
	}
	return sortedUnique(dirs)
}

// ParsePsTable parses "pid pgid sid stat" rows; stat's first letter is the
// state (ps adds flags such as s, +, l after it).
func ParsePsTable(out []byte) ([]ProcessEntry, error) {
	var rows []ProcessEntry
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) != 4 {
			return nil, fmt.Errorf("unexpected ps row %q", line)
		}
		var n [3]int
		for i := range n {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				return nil, fmt.Errorf("unexpected ps row %q", line)
			}
			n[i] = v
		}
		rows = append(rows, ProcessEntry{Pid: n[0], Pgid: n[1], Sid: n[2], State: f[3][:1]})
	}
	return rows, nil
}

func (c Compat) GroupAlive(ctx context.Context, pgid int) (bool, error) {
	rows, err := c.Processes(ctx)
	if err != nil {
		return false, err
	}
	return GroupLiveIn(rows, pgid), nil
}

// GroupLiveIn reports whether rows hold a live member of group pgid, or a
// live escapee its supervisor still counts in it.
func GroupLiveIn(rows []ProcessEntry, pgid int) bool {
	for _, p := range rows {
		if (p.Pgid == pgid || p.EscapeeOf == pgid) && p.Live() {
			return true
		}
	}
	return false
}

// sessionGroupsIn lists the groups of session sid with a live member.
func sessionGroupsIn(rows []ProcessEntry, sid int) []int {
	seen := map[int]bool{}
	var out []int
	for _, p := range rows {
		if p.Sid == sid && p.Live() && !seen[p.Pgid] {
			seen[p.Pgid] = true
			out = append(out, p.Pgid)
		}
	}
	sort.Ints(out)
	return out
}

func (c Compat) SessionGroups(ctx context.Context, sid int) ([]int, error) {
	rows, err := c.Processes(ctx)
	if err != nil {
		return nil, err
	}
	return sessionGroupsIn(rows, sid), nil
}

func (c Compat) SignalGroup(ctx context.Context, pgid int, sig syscall.Signal) (bool, error) {
	if err := CheckGroupID(pgid); err != nil {
		return false, err
	}
	if c.Batch != nil {
		return c.batchedSignal(ctx, pgid, sig)
	}
	r, err := c.Runner.Run(ctx, `kill -s "$1" -- "-$2" 2>/dev/null`, []string{strings.TrimPrefix(SignalName(sig), "SIG"), strconv.Itoa(pgid)}, nil)
	if err != nil {
		return false, fmt.Errorf("signal process group %d: %w", pgid, err)
	}
	// kill exits 1 when no process matched; that is the group being gone.
	return r.ExitCode == 0, nil
}

func (c Compat) ForegroundGroup(ctx context.Context, pid int) (int, bool, bool, error) {
	r, err := c.Runner.Run(ctx, `exec ps -o tpgid= -p "$1"`, []string{strconv.Itoa(pid)}, nil)
	if err != nil {
		return 0, false, false, fmt.Errorf("foreground of %d: %w", pid, err)
	}
	if r.ExitCode == 1 {
		return 0, false, false, nil
	}
	if r.ExitCode != 0 {
		return 0, false, false, fmt.Errorf("foreground of %d: ps exited %d: %s", pid, r.ExitCode, ClipText(r.Stderr))
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(r.Stdout)))
	if err != nil {
		return 0, false, false, fmt.Errorf("cannot resolve foreground process group of %d from %q", pid, ClipText(r.Stdout))
	}
	if n <= 0 {
		return 0, false, false, nil
	}
	return n, false, true, nil
}

func (c Compat) ReadFile(ctx context.Context, path string) ([]byte, error) {
	r, err := c.Runner.Run(ctx, `if [ -f "$1" ]; then exec cat -- "$1"; else exit 44; fi`, []string{path}, nil)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	switch r.ExitCode {
	case 0:
		return r.Stdout, nil
	case 44:
		return nil, fmt.Errorf("read %s: %w", path, ErrFileNotFound)
	}
	return nil, fmt.Errorf("read %s: cat exited %d: %s", path, r.ExitCode, ClipText(r.Stderr))
}

// readRangeScript prints the file's size on a line, then length bytes from
// offset: tail seeks in a regular file, so no part before offset is read.
const readRangeScript = `[ -f "$1" ] || exit 44
size=$(wc -c <"$1") || exit 45
printf '%s\n' "$size"
tail -c +"$2" -- "$1" | head -c "$3"`

func (c Compat) ReadRange(ctx context.Context, path string, offset int64, length int) ([]byte, int64, error) {
	if err := checkRange(path, offset, length); err != nil {
		return nil, 0, err
	}
	r, err := c.Runner.Run(ctx, readRangeScript, []string{path, strconv.FormatInt(offset+1, 10), strconv.Itoa(length)}, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", path, err)
	}
	switch r.ExitCode {
	case 0:
	case 44:
		return nil, 0, fmt.Errorf("read %s: %w", path, ErrFileNotFound)
	default:
		return nil, 0, fmt.Errorf("read %s: exit %d: %s", path, r.ExitCode, ClipText(r.Stderr))
	}
	line, data, ok := bytes.Cut(r.Stdout, []byte{'\n'})
	size, perr := strconv.ParseInt(strings.TrimSpace(string(line)), 10, 64)
	if !ok || perr != nil {
		return nil, 0, fmt.Errorf("read %s: cannot tell its size from %q", path, ClipText(line))
	}
	return data, size, nil
}

// checkRange refuses a range a ReadRange cannot serve.
func checkRange(path string, offset int64, length int) error {
	if offset < 0 || length <= 0 || length > MaxReadRange {
		return fmt.Errorf("read %s: bad range (offset %d, length %d; at most %d)", path, offset, length, MaxReadRange)
	}
	return nil
}

// listDirScript prints "<d|f> <size> <name>\0" per entry, with no forks
// beyond the one stat per entry bash does for the tests.
const listDirScript = `[ -d "$1" ] || exit 44
cd -- "$1" || exit 45
shopt -s nullglob dotglob
for e in *; do
	if [ -d "$e" ]; then printf 'd 0 %s\0' "$e"; else printf 'f 0 %s\0' "$e"; fi
done`

func (c Compat) ListDir(ctx context.Context, path string) ([]DirEntry, error) {
	r, err := c.Runner.Run(ctx, listDirScript, []string{path}, nil)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", path, err)
	}
	switch r.ExitCode {
	case 0:
	case 44:
		return nil, fmt.Errorf("list %s: %w", path, ErrFileNotFound)
	default:
		return nil, fmt.Errorf("list %s: exit %d: %s", path, r.ExitCode, ClipText(r.Stderr))
	}
	var out []DirEntry
	for _, rec := range bytes.Split(r.Stdout, []byte{0}) {
		if len(rec) < 5 {
			continue
		}
		out = append(out, DirEntry{Dir: rec[0] == 'd', Name: string(rec[4:])})
	}
	return out, nil
}

func (c Compat) Remove(ctx context.Context, paths ...string) error {
	// The script and its quoted arguments travel as one argument of bash,
	// and Linux caps one argument at 128 KiB: a prune of some 1,800 groups
	// failed with "argument list too long". So the paths go in batches.
	for len(paths) > 0 {
		n, size := 0, 0
		for n < len(paths) && (n == 0 || size+len(wrapper.Quote(paths[n]))+1 <= removeBatchBytes) {
			size += len(wrapper.Quote(paths[n])) + 1
			n++
		}
		r, err := c.Runner.Run(ctx, `exec rm -rf -- "$@"`, paths[:n], nil)
		if err != nil {
			return fmt.Errorf("remove: %w", err)
		}
		if r.ExitCode != 0 {
			return fmt.Errorf("remove: rm exited %d: %s", r.ExitCode, ClipText(r.Stderr))
		}
		paths = paths[n:]
	}
	return nil
}

// removeBatchBytes bounds the quoted paths of one rm, well under the
// kernel's 128 KiB for one argument.
const removeBatchBytes = 64 << 10

// ClipText is b as one short line for an error message.
func ClipText(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

func sortedUnique(xs []string) []string {
	sort.Strings(xs)
	out := xs[:0]
	for i, x := range xs {
		if i == 0 || x != xs[i-1] {
			out = append(out, x)
		}
	}
	return out
}
