package uisource

import (
	"context"
	"time"

	"sandtop/ui"
)

// On stock envd the table comes from one ps run, read through the seam
// (Runtime.ProcessTable), which asks ps for every column the TUI shows.

// psRow is one process as ps printed it.
type psRow struct {
	ui.Process
	TPGID int // foreground group of the process's terminal; <= 0 when none
}

// runPS reads the sandbox's process table in the TUI's terms.
func (s *backendSource) runPS(ctx context.Context) ([]psRow, time.Time, error) {
	table, taken, err := s.rt.ProcessTable(ctx)
	if err != nil {
		return nil, taken, err
	}
	rows := make([]psRow, len(table))
	for i, r := range table {
		rows[i] = psRow{TPGID: r.Tpgid, Process: ui.Process{
			PID: r.Pid, PPID: r.Ppid, PGID: r.Pgid, SID: r.Sid, State: r.State, Started: r.Started,
			CPUPercent: r.CPUPercent, RSSBytes: r.RSSBytes, TTY: r.TTY, Argv: r.Argv, Comm: r.Comm,
		}}
	}
	return rows, taken, nil
}
