package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"sandtop/groupstate"
	"sandtop/outlog"
)

// followPoll is how often "logs -f" looks for new output.
const followPoll = 250 * time.Millisecond

// spillWait is how long "logs -f" waits for a group that was just started
// to create its spill files before it streams its live output instead.
const spillWait = time.Second

// logsOptions is what "sandtop logs" was asked for.
type logsOptions struct {
	pid int // the group's leader, so its pgid
	// sandbox is the SANDBOX of SANDBOX/PID; empty: the command's own.
	sandbox    string
	follow     bool
	tail       int    // with hasTail: only the last tail lines
	hasTail    bool   // --tail N, N >= 0, was given
	since      string // a duration or an RFC 3339 time; empty: all
	timestamps bool
}

func newLogsCmd(f *factory) *cobra.Command {
	var opts logsOptions
	c := &cobra.Command{
		Use:   "logs [SANDBOX/]PID [-f] [--tail N] [--since D] [--timestamps]",
		Short: "Print the output a process group kept in the sandbox",
		Long: `Prints the output that 'sandtop run' kept for the group whose leader is PID
(its pgid), from the spill files in the sandbox, as docker logs does: its
stdout to stdout and its stderr to stderr, in the order they arrived.
With -f it goes on printing new output until the group has no live
member left.

  --tail N        only the last N lines (with -f: then the new ones)
  --since D       only lines that arrived in the last D (5m, 1h30m), or
                  since an RFC 3339 time (2026-12-06T10:00:00Z)
  --timestamps    start each line with its arrival time (RFC 3339, to
                  the nanosecond, UTC), as kubectl logs --timestamps does

Arrival times are kept beside the output by sandtop's supervisor. Output
kept without them (by an older sandtop, or the bash wrapper on a stock
envd that cannot run the supervisor) prints its stdout, then its stderr,
and has no times: --timestamps and --since say so on stderr.
A group that kept no output (started with 'run --wait', or by another
client) can still be followed while its leader runs (-f): its live output,
from the daemon's replay buffer on, stdout and stderr merged.
SANDBOX/PID names a group in another sandbox than the one the target
flags select, SANDBOX as 'sandtop ls -A' prints it.
For a terminal, use 'sandtop attach'.`,
		Example: `  sandtop logs 4123
  sandtop logs -f --tail 20 4123
  sandtop logs --since 10m --timestamps 4123 2>&1 | less`,
		Args: usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) > 0 {
				return nil, cobra.ShellCompDirectiveNoFileComp
			}
			return liveProcesses(cmd, f, false), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ref, err := parseGroupRef("pid", args[0])
			if err != nil {
				return err
			}
			opts.pid, opts.sandbox = ref.pgid, ref.sandbox
			opts.hasTail = opts.tail >= 0
			return runLogs(cmd.Context(), f, opts)
		},
	}
	c.Flags().BoolVarP(&opts.follow, "follow", "f", false, "keep printing new output until the group is empty")
	c.Flags().IntVarP(&opts.tail, "tail", "n", -1, "only the last N lines (-1: all)")
	c.Flags().StringVar(&opts.since, "since", "", "only lines that arrived in the last D (5m), or since an RFC 3339 time")
	c.Flags().BoolVarP(&opts.timestamps, "timestamps", "t", false, "start each line with its arrival time (RFC 3339, nanoseconds)")
	return c
}

// parseSince reads --since: a duration back from now, or a time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, usagef(fmt.Errorf("--since %q: a duration must not be negative", s))
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	return time.Time{}, usagef(fmt.Errorf("--since %q: want a duration (5m, 1h30m) or an RFC 3339 time (2026-12-06T10:00:00Z)", s))
}

// runLogs prints what the group kept, in arrival order, or with follow
// goes on until the group is empty.
func runLogs(ctx context.Context, f *factory, opts logsOptions) error {
	since, err := parseSince(opts.since, f.Now())
	if err != nil {
		return err
	}
	pid := opts.pid
	s, err := f.ConnectionIn(ctx, opts.sandbox)
	if err != nil {
		return err
	}
	defer s.Close()
	grp, err := s.groupByPgid(ctx, pid)
	if err != nil {
		return err
	}
	p := newLogPrinter(f.Out, f.ErrOut, opts, since)
	live := grp.State == groupstate.Running || grp.State == groupstate.Stopped
	if grp.StateDir == "" {
		if opts.follow && live {
			return followLive(ctx, s, grp.PGID, p)
		}
		return fmt.Errorf("group %d kept no output (it was started by another client)", pid)
	}
	// The reader reads a bounded piece at a time: memory stays bounded
	// whatever the size of the spill ('run' keeps up to 64 MiB).
	rd := s.Runtime.OutputLog(grp.StateDir)
	if !opts.follow {
		if err := rd.ReadAll(ctx, p.segment); err != nil {
			return keptOutputErr(pid, err)
		}
	} else {
		if live && !rd.Found() && !spillsAppear(ctx, rd) {
			// Kept nothing: 'run --wait', or another client's group. Its
			// live stream is what there is.
			return followLive(ctx, s, grp.PGID, p)
		}
		if err := followKept(ctx, s.Runtime, grp.PGID, rd, p); err != nil {
			return keptOutputErr(pid, err)
		}
	}
	p.finish()
	p.noteUnmarked(pid, rd.Found() && !rd.Marked())
	if rd.Found() || ctx.Err() != nil {
		return nil
	}
	return fmt.Errorf("group %d kept no output (started with 'run --wait', by another client, or its output outgrew the spill cap)", pid)
}

// keptOutputErr names the group in a failed read of what it kept, and
// says plainly when the output files were removed under their marks.
func keptOutputErr(pid int, err error) error {
	if errors.Is(err, outlog.ErrSpillGone) {
		return fmt.Errorf("group %d's kept output is gone: its files were removed from the sandbox (%w)", pid, err)
	}
	return fmt.Errorf("group %d: reading its kept output: %w", pid, err)
}

// spillsAppear waits a moment for a group that was just started to
// create its spills (its supervisor makes them once it runs).
func spillsAppear(ctx context.Context, rd *outlog.Reader) bool {
	deadline := time.Now().Add(spillWait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if err := rd.Probe(ctx); err != nil {
			return false
		}
		if rd.Found() {
			return true
		}
		select {
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	return false
}

// groupAliver is what following needs of the runtime besides reads.
type groupAliver interface {
	GroupAlive(ctx context.Context, pgid int) (bool, error)
}

// followKept prints the kept output as it grows, each byte once, until the
// group is empty and all it kept is printed, or ctx ends.
func followKept(ctx context.Context, plane groupAliver, pgid int, rd *outlog.Reader, p *logPrinter) error {
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		// Asked before reading, so the last read sees all the group wrote.
		alive, aerr := plane.GroupAlive(ctx, pgid)
		final := aerr == nil && !alive
		for {
			segs, err := rd.Next(ctx, final)
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			if len(segs) == 0 {
				break
			}
			for _, seg := range segs {
				if err := p.segment(seg); err != nil {
					return err
				}
			}
		}
		p.caughtUp() // --tail: the last lines so far, then each new one
		if final {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// followLive streams the daemon's replay buffer and live output of a
// group that kept none, stdout and stderr merged, each piece timed as it
// arrives here.
func followLive(ctx context.Context, s *connection, pgid int, p *logPrinter) error {
	live, err := s.Runtime.Output(ctx, pgid)
	if err != nil {
		return fmt.Errorf("group %d kept no output, and its live output cannot be read: %w", pgid, err)
	}
	defer live.Close()
	p.caughtUp() // the replay's lines cannot be told from the live ones
	buf := make([]byte, 32<<10)
	for {
		n, err := live.Read(buf)
		if n > 0 {
			data := append([]byte(nil), buf[:n]...)
			if perr := p.segment(outlog.Segment{Stream: outlog.Stdout, At: time.Now(), Data: data}); perr != nil {
				return perr
			}
		}
		if err == io.EOF || ctx.Err() != nil {
			p.finish()
			return nil
		}
		if err != nil {
			return fmt.Errorf("following group %d: %w", pgid, err)
		}
	}
}

// logPrinter prints output as the logs flags ask: the bytes as they are,
// or, with --tail, --since or --timestamps, line by line.
type logPrinter struct {
	out, errOut io.Writer
	lines       bool // line by line
	timestamps  bool
	since       time.Time // zero: all
	tail        int       // with holding at first: the last tail lines
	// held are the last tail lines, until caughtUp prints them.
	held    []outlog.Line
	holding bool
	liner   outlog.Liner
	err     error
	untimed bool // a line had no arrival time
}

func newLogPrinter(out, errOut io.Writer, opts logsOptions, since time.Time) *logPrinter {
	return &logPrinter{out: out, errOut: errOut, timestamps: opts.timestamps, since: since, tail: opts.tail,
		lines:   opts.hasTail || !since.IsZero() || opts.timestamps,
		holding: opts.hasTail}
}

func (p *logPrinter) writer(s outlog.Stream) io.Writer {
	if s == outlog.Stderr {
		return p.errOut
	}
	return p.out
}

// segment prints (or, for --tail, holds) a piece of output.
func (p *logPrinter) segment(seg outlog.Segment) error {
	if seg.At.IsZero() {
		p.untimed = true
	}
	if !p.lines {
		_, err := p.writer(seg.Stream).Write(seg.Data)
		return err
	}
	p.liner.Add(seg, p.line)
	return p.err
}

func (p *logPrinter) line(l outlog.Line) {
	// A line of unknown time is kept: it cannot be shown to be older.
	if !p.since.IsZero() && !l.At.IsZero() && l.At.Before(p.since) {
		return
	}
	if p.holding {
		if p.tail == 0 {
			return
		}
		if len(p.held) == p.tail {
			copy(p.held, p.held[1:])
			p.held = p.held[:p.tail-1]
		}
		p.held = append(p.held, l)
		return
	}
	p.emit(l)
}

func (p *logPrinter) emit(l outlog.Line) {
	if p.err != nil {
		return
	}
	w := p.writer(l.Stream)
	if p.timestamps && !l.At.IsZero() {
		if _, p.err = io.WriteString(w, l.At.UTC().Format(time.RFC3339Nano)+" "); p.err != nil {
			return
		}
	}
	_, p.err = w.Write(l.Text)
}

// caughtUp prints the held --tail lines: from here on, lines are printed
// as they come.
func (p *logPrinter) caughtUp() {
	if !p.holding {
		return
	}
	p.holding = false
	for _, l := range p.held {
		p.emit(l)
	}
	p.held = nil
}

// finish prints the last, unfinished lines and what --tail held.
func (p *logPrinter) finish() {
	if p.lines {
		p.liner.Flush(p.line)
	}
	p.caughtUp()
}

// noteUnmarked says on stderr when the output has no arrival times and
// the flags wanted them.
func (p *logPrinter) noteUnmarked(pid int, oldLayout bool) {
	if !(p.timestamps || !p.since.IsZero()) || !(p.untimed || oldLayout) {
		return
	}
	fmt.Fprintf(p.errOut, "sandtop: some of group %s's output was kept without arrival times (by an older sandtop, or the bash wrapper); it is printed without them, and --since keeps it\n", strconv.Itoa(pid))
}
