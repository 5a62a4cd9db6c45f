package control

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"sandtop/backend/procscan"
)

// ProcessRow is one process of the sandbox's table as ps reads it on stock
// envd, with what a supervisor shows: parent, terminal, age and usage.
type ProcessRow struct {
	Pid, Ppid, Pgid, Sid int
	// Tpgid is the foreground group of the process's terminal; <= 0 when
	// it has none.
	Tpgid      int
	State      string // ps's first STAT letter
	Started    time.Time
	CPUPercent float64
	RSSBytes   uint64
	TTY        string // "" without a terminal
	// Argv is ps's rendering split on blanks: exact only for arguments
	// without them (read /proc/PID/cmdline where it matters).
	Argv []string
	Comm string
	// args is ps's rendering as it printed it.
	args string
}

// processTableScript asks ps for every column in one run; args comes last
// because it may contain blanks, and the C locale keeps pcpu's decimal
// point a point. Where sandtop's supervisor is installed ($1), it prints
// the same table in one process instead (see procscan).
const processTableScript = `shopt -s execfail
[ -n "$1" ] && [ -x "$1" ] && exec "$1" ` + procscan.TableSubcommand + `
LC_ALL=C exec ps -e -ww -o pid= -o ppid= -o pgid= -o sid= -o tpgid= -o stat= -o etimes= -o pcpu= -o rss= -o tty= -o args=`

// ReadProcessTable runs processTableScript, once for all callers within
// OneTable: a listing's groups, agents' roots and members then come from
// one ps. The table streams in and is split into rows as it comes, so its
// size is bounded by the sandbox's processes (and each row by
// maxRowBytes), not by what one command may print.
func ReadProcessTable(ctx context.Context, cmd Runner) ([]ProcessRow, time.Time, error) {
	read := func() ([]ProcessRow, time.Time, error) {
		var t tableReader
		res, err := cmd.Stream(ctx, processTableScript, []string{cmd.Scanner}, t.write)
		taken := time.Now()
		if err != nil {
			return nil, taken, fmt.Errorf("ps: %w", err)
		}
		if res.ExitCode != 0 {
			return nil, taken, fmt.Errorf("ps exited %d: %s", res.ExitCode, ClipText(res.Stderr))
		}
		rows, err := parseProcessLines(t.finish(), taken)
		return rows, taken, err
	}
	m, ok := ctx.Value(oneTableKey{}).(*tableMemo)
	if !ok {
		return read()
	}
	m.psOnce.Do(func() { m.ps, m.psTaken, m.psErr = read() })
	return m.ps, m.psTaken, m.psErr
}

// maxRowBytes bounds one row of the table: the bash wrapper's processes
// carry its script (some 18 KiB) in their argv; what goes beyond is cut
// (the exact argv is read from /proc where it matters).
const maxRowBytes = 64 << 10

// tableReader splits processTableScript's output into lines as it streams
// in. They are parsed once the table is whole, when the time it was taken
// (which ages count from) is known.
type tableReader struct {
	lines   []string
	partial []byte
}

func (t *tableReader) write(b []byte) error {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		chunk := b
		if i >= 0 {
			chunk = b[:i]
		}
		if room := maxRowBytes - len(t.partial); room > 0 {
			t.partial = append(t.partial, chunk[:min(len(chunk), room)]...)
		}
		if i < 0 {
			return nil
		}
		t.lines = append(t.lines, string(t.partial))
		t.partial = t.partial[:0]
		b = b[i+1:]
	}
	return nil
}

// finish returns the lines, the last one too if it had no newline.
func (t *tableReader) finish() []string {
	if len(t.partial) > 0 {
		t.lines = append(t.lines, string(t.partial))
	}
	return t.lines
}

// parseProcessTable reads processTableScript's rows.
func parseProcessTable(out []byte, taken time.Time) ([]ProcessRow, error) {
	return parseProcessLines(strings.Split(string(out), "\n"), taken)
}

func parseProcessLines(lines []string, taken time.Time) ([]ProcessRow, error) {
	rows := make([]ProcessRow, 0, len(lines))
	for _, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f, args := fieldsN(line, 10)
		bad := fmt.Errorf("ps: unexpected row %q", ClipText([]byte(line)))
		if len(f) < 10 {
			return nil, bad
		}
		var n [7]int
		for i, idx := range []int{0, 1, 2, 3, 4, 6, 8} {
			v, err := strconv.Atoi(f[idx])
			if err != nil {
				return nil, bad
			}
			n[i] = v
		}
		cpu, _ := strconv.ParseFloat(f[7], 64)
		r := ProcessRow{Pid: n[0], Ppid: n[1], Pgid: n[2], Sid: n[3], Tpgid: n[4], State: f[5][:1],
			Started: taken.Add(-time.Duration(n[5]) * time.Second), CPUPercent: cpu,
			RSSBytes: uint64(max(n[6], 0)) * 1024, Argv: strings.Fields(args), args: args}
		if f[9] != "?" && f[9] != "-" {
			r.TTY = f[9]
		}
		if len(r.Argv) > 0 {
			r.Comm = strings.Trim(path.Base(r.Argv[0]), "[]")
		}
		rows = append(rows, r)
	}
	return rows, nil
}

// fieldsN splits off the first n blank-separated fields and returns the
// rest of the line, spacing kept, as the remainder.
func fieldsN(line string, n int) ([]string, string) {
	var f []string
	rest := line
	for len(f) < n {
		rest = strings.TrimLeft(rest, " \t")
		if rest == "" {
			break
		}
		end := strings.IndexAny(rest, " \t")
		if end < 0 {
			end = len(rest)
		}
		f = append(f, rest[:end])
		rest = rest[end:]
	}
	return f, strings.TrimLeft(rest, " \t")
}
