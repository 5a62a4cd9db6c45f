package uisource

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/gen/process"
	"sandtop/backend/gen/process/processconnect"
	"sandtop/ui"
)

// On stock envd the process table comes from one ps run through
// process.Process/Start. The seam's ControlPlane.Processes runs ps too, but
// keeps only pid, pgid, sid and state; the table needs argv, parent, tty,
// age and usage as well, so this asks ps for more columns in the same single
// command. args comes last because it may contain spaces.
const psScript = `exec ps -e -ww -o pid= -o ppid= -o pgid= -o sid= -o tpgid= -o stat= -o etimes= -o pcpu= -o rss= -o tty= -o args=`

// psLimit bounds what one ps run may print.
const psLimit = 8 << 20

// psRow is one process as ps printed it.
type psRow struct {
	ui.Process
	TPGID int // foreground group of the process's terminal; <= 0 when none
}

// runPS runs ps in the sandbox and parses its table.
func runPS(ctx context.Context, proc processconnect.ProcessClient) ([]psRow, time.Time, error) {
	out, err := runCommand(ctx, proc, psScript)
	taken := time.Now()
	if err != nil {
		return nil, taken, fmt.Errorf("ps: %w", err)
	}
	rows, err := parsePS(out, taken)
	return rows, taken, err
}

// runCommand runs a short bash script through Process.Start and returns its
// stdout; a non-zero exit is an error carrying stderr.
func runCommand(ctx context.Context, proc processconnect.ProcessClient, script string) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := proc.Start(ctx, connect.NewRequest(&process.StartRequest{Process: &process.ProcessConfig{
		Cmd: "/bin/bash", Args: []string{"--noprofile", "--norc", "-c", script},
		Envs: map[string]string{"LC_ALL": "C", "BASH_ENV": "", "ENV": ""},
	}}))
	if err != nil {
		return nil, err
	}
	defer stream.Close()
	var stdout, stderr bytes.Buffer
	for stream.Receive() {
		ev := stream.Msg().GetEvent()
		if d := ev.GetData(); d != nil {
			stdout.Write(d.GetStdout())
			stderr.Write(d.GetStderr())
			if stdout.Len()+stderr.Len() > psLimit {
				return nil, fmt.Errorf("printed more than %d bytes", psLimit)
			}
		}
		if end := ev.GetEnd(); end != nil {
			if !end.GetExited() || end.GetExitCode() != 0 {
				return nil, fmt.Errorf("exited %d (%s): %s", end.GetExitCode(), end.GetStatus(), clipOutput(stderr.String()))
			}
			return stdout.Bytes(), nil
		}
	}
	if err := stream.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("the command's stream ended without an end event")
}

// parsePS reads psScript's rows. argv is split on spaces (ps joins it), so
// it is exact only for arguments without blanks; wrapper processes, whose
// arguments matter, are re-read exactly from /proc (see wrapperArgv).
func parsePS(out []byte, taken time.Time) ([]psRow, error) {
	var rows []psRow
	for _, line := range strings.Split(string(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f, args := fieldsN(line, 10)
		if len(f) < 10 {
			return nil, fmt.Errorf("ps: unexpected row %q", clipOutput(line))
		}
		var n [7]int
		for i, idx := range []int{0, 1, 2, 3, 4, 6, 8} {
			v, err := strconv.Atoi(f[idx])
			if err != nil {
				return nil, fmt.Errorf("ps: unexpected row %q", clipOutput(line))
			}
			n[i] = v
		}
		cpu, _ := strconv.ParseFloat(f[7], 64)
		r := psRow{TPGID: n[4], Process: ui.Process{
			PID: n[0], PPID: n[1], PGID: n[2], SID: n[3], State: f[5][:1],
			Started: taken.Add(-time.Duration(n[5]) * time.Second), CPUPercent: cpu,
			RSSBytes: uint64(max(n[6], 0)) * 1024, Argv: strings.Fields(args),
		}}
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

func clipOutput(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}
