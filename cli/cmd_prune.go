package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// pruneOptions is what "sandtop prune" was asked for.
type pruneOptions struct {
	olderThan time.Duration // 0: every settled group
	dryRun    bool
}

func newPruneCmd(f *factory) *cobra.Command {
	var opts pruneOptions
	c := &cobra.Command{
		Use:   "prune [--older-than DURATION] [--dry-run]",
		Short: "Remove what finished process groups left in the sandbox",
		Long: `Every group started through the seam keeps a small state directory in the
sandbox (its pgid, exit status, command and spilled output), so that 'ls'
and 'logs' can still answer after it ends. prune removes those of settled
groups (no live member left), oldest first, and prints what it removed.
Running groups, groups still starting and terminals are never touched.`,
		Example: `  sandtop prune --dry-run
  sandtop prune --older-than 1h`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPrune(cmd.Context(), f, opts)
		},
	}
	fs := c.Flags()
	fs.DurationVar(&opts.olderThan, "older-than", 0, "only groups whose state last changed longer ago than this")
	fs.BoolVar(&opts.dryRun, "dry-run", false, "print what would be removed and remove nothing")
	return c
}

// runPrune removes (or with dryRun lists) the settled groups' state
// directories and prints each.
func runPrune(ctx context.Context, f *factory, opts pruneOptions) error {
	if opts.olderThan < 0 {
		return usagef(fmt.Errorf("--older-than %s must not be negative", opts.olderThan))
	}
	open := func() (*connection, error) { return f.MutableConnection(ctx, "remove finished groups") }
	if opts.dryRun { // changes nothing, so read-only targets may look
		open = func() (*connection, error) { return f.Connection(ctx) }
	}
	s, err := open()
	if err != nil {
		return err
	}
	defer s.Close()
	var cutoff time.Time
	if opts.olderThan > 0 {
		cutoff = f.Now().Add(-opts.olderThan)
	}
	gone, err := s.Runtime.PruneFinished(ctx, cutoff, opts.dryRun)
	if err != nil {
		return fmt.Errorf("prune: %w", err)
	}
	verb := "removed"
	if opts.dryRun {
		verb = "would remove"
	}
	for _, grp := range gone {
		fmt.Fprintf(f.Out, "%s pgid %d  %s\n", verb, grp.Pgid, dash(clip(strings.Join(grp.Argv, " "), 60)))
	}
	fmt.Fprintf(f.Out, "%s %d finished group(s)\n", verb, len(gone))
	return nil
}
