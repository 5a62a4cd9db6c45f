package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
	"sandtop/wrapper"
)

// followPoll is how often "logs -f" looks for new output.
const followPoll = 250 * time.Millisecond

// logsOptions is what "sandtop logs" was asked for.
type logsOptions struct {
	pid int // the group's leader, so its pgid
	// sandbox is the SANDBOX of SANDBOX/PID; empty: the command's own.
	sandbox string
	follow  bool
}

func newLogsCmd(f *factory) *cobra.Command {
	var opts logsOptions
	c := &cobra.Command{
		Use:   "logs [SANDBOX/]PID [-f]",
		Short: "Print the output a process group kept in the sandbox",
		Long: `Prints the stdout and then the stderr that 'sandtop run' kept for the group
whose leader is PID (its pgid), from the spill files in the sandbox. With
-f it streams the group's recent and live output (stdout and stderr merged,
from the daemon's replay buffer) while its leader runs, and otherwise keeps
printing the spill files until the group has no live member left.
SANDBOX/PID names a group in another sandbox than the one the target
flags select, SANDBOX as 'sandtop ls -A' prints it.
For a terminal, use 'sandtop attach'.`,
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
			return runLogs(cmd.Context(), f, opts)
		},
	}
	c.Flags().BoolVarP(&opts.follow, "follow", "f", false, "keep printing new output until the group is empty")
	return c
}

// runLogs prints what the group kept (its stdout to Out, its stderr to
// ErrOut), or with follow streams it until the group is empty.
func runLogs(ctx context.Context, f *factory, opts logsOptions) error {
	pid := opts.pid
	s, err := f.SessionIn(ctx, opts.sandbox)
	if err != nil {
		return err
	}
	defer s.Close()
	grp, err := s.groupByPgid(ctx, pid)
	if err != nil {
		return err
	}
	stdout := path.Join(grp.StateDir, wrapper.StdoutSpillFile)
	stderr := path.Join(grp.StateDir, wrapper.StderrSpillFile)
	if !opts.follow {
		found, err := printFile(ctx, s, stdout, f.Out, 0)
		if err != nil {
			return err
		}
		found2, err := printFile(ctx, s, stderr, f.ErrOut, 0)
		if err != nil {
			return err
		}
		if found < 0 && found2 < 0 {
			return fmt.Errorf("group %d kept no output (started with 'run --wait', by another client, or its output outgrew the spill cap)", pid)
		}
		return nil
	}
	// While the leader lives, the daemon's replay and live stream is the
	// freshest view; the spill files are the record after it.
	if live, err := s.Runtime.Output(ctx, grp.Pgid); err == nil {
		defer live.Close()
		_, err := io.Copy(f.Out, live)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("following group %d: %w", pid, err)
		}
		return nil
	}
	return followFiles(ctx, f, s, grp.Pgid, stdout, stderr)
}

// printFile writes path's bytes from offset to w and returns the new
// offset, or -1 when the file does not exist.
func printFile(ctx context.Context, s *session, p string, w io.Writer, offset int64) (int64, error) {
	b, err := s.Runtime.Control().ReadFile(ctx, p)
	if errors.Is(err, seam.ErrFileNotFound) {
		return -1, nil
	}
	if err != nil {
		return offset, err
	}
	if int64(len(b)) < offset { // truncated or replaced: start over
		offset = 0
	}
	if _, err := w.Write(b[offset:]); err != nil {
		return offset, err
	}
	return int64(len(b)), nil
}

// followFiles prints both files as they grow until the group is empty
// (one last read after that) or ctx ends.
func followFiles(ctx context.Context, f *factory, s *session, pgid int, stdout, stderr string) error {
	var outOff, errOff int64
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		alive, aerr := s.Runtime.Control().GroupAlive(ctx, pgid)
		var err error
		if outOff, err = printFile(ctx, s, stdout, f.Out, max(outOff, 0)); err != nil {
			return err
		}
		if errOff, err = printFile(ctx, s, stderr, f.ErrOut, max(errOff, 0)); err != nil {
			return err
		}
		if aerr == nil && !alive {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}
