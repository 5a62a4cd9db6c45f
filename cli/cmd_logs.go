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
	"sandtop/backend/seam/control"
	"sandtop/groupstate"
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
	spills := []spill{
		{path: path.Join(grp.StateDir, wrapper.StdoutSpillFile), w: f.Out},
		{path: path.Join(grp.StateDir, wrapper.StderrSpillFile), w: f.ErrOut},
	}
	var found bool
	if !opts.follow {
		found, err = printSpills(ctx, s.Runtime.Control(), spills)
	} else {
		// While the leader lives, the daemon's replay and live stream is
		// the freshest view. Once it exited, the spill files are the whole
		// record (the replay holds only the end of a long output).
		if grp.State == seam.GroupRunning || grp.State == groupstate.Stopped {
			if live, err := s.Runtime.Output(ctx, grp.Pgid); err == nil {
				defer live.Close()
				_, err := io.Copy(f.Out, live)
				if err != nil && ctx.Err() == nil {
					return fmt.Errorf("following group %d: %w", pid, err)
				}
				return nil
			}
		}
		found, err = followSpills(ctx, s.Runtime.Control(), grp.Pgid, spills)
	}
	if err != nil || found || ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("group %d kept no output (started with 'run --wait', by another client, or its output outgrew the spill cap)", pid)
}

// spillReader is what logs needs of the sandbox's control plane: reads of
// a file in bounded pieces, and whether the group still has members.
type spillReader interface {
	ReadRange(ctx context.Context, path string, offset int64, length int) ([]byte, int64, error)
	GroupAlive(ctx context.Context, pgid int) (bool, error)
}

// spill is one spill file of a group and where its bytes go.
type spill struct {
	path string
	w    io.Writer
	// off is how much of it has been printed; -1 until it was found.
	off int64
}

// logsChunk is how much logs reads at a time: its memory stays bounded
// whatever the size of the spill ('run' keeps up to 64 MiB).
const logsChunk = control.MaxReadRange

// printSpills prints each spill file whole, one after the other; found
// says whether any existed.
func printSpills(ctx context.Context, rr spillReader, spills []spill) (found bool, err error) {
	for i := range spills {
		spills[i].off = -1
		if err := copySpill(ctx, rr, &spills[i]); err != nil {
			return false, err
		}
		found = found || spills[i].off >= 0
	}
	return found, nil
}

// copySpill prints sp's file from where it left off to the end the file has
// now, one chunk at a time.
func copySpill(ctx context.Context, rr spillReader, sp *spill) error {
	off := max(sp.off, 0)
	for {
		b, size, err := rr.ReadRange(ctx, sp.path, off, logsChunk)
		if errors.Is(err, seam.ErrFileNotFound) {
			return nil // not (yet, or any more) there: nothing new to print
		}
		if err != nil {
			return err
		}
		if size < off { // truncated or replaced: start over
			off = 0
			continue
		}
		if _, err := sp.w.Write(b); err != nil {
			return err
		}
		off += int64(len(b))
		sp.off = off
		if len(b) < logsChunk {
			return nil
		}
	}
}

// followSpills prints the spill files as they grow, each byte once, until
// the group is empty and the files are read to their end, or ctx ends.
func followSpills(ctx context.Context, rr spillReader, pgid int, spills []spill) (found bool, err error) {
	for i := range spills {
		spills[i].off = -1
	}
	tick := time.NewTicker(followPoll)
	defer tick.Stop()
	for {
		// Asked before reading, so the last read sees all the group wrote.
		alive, aerr := rr.GroupAlive(ctx, pgid)
		for i := range spills {
			if err := copySpill(ctx, rr, &spills[i]); err != nil {
				return found, err
			}
			found = found || spills[i].off >= 0
		}
		if aerr == nil && !alive {
			return found, nil
		}
		select {
		case <-ctx.Done():
			return found, nil
		case <-tick.C:
		}
	}
}
