package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

func newPruneCmd(g *globalFlags) *cobra.Command {
	var olderThan time.Duration
	var dryRun bool
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
			if olderThan < 0 {
				return usagef(fmt.Errorf("--older-than %s must not be negative", olderThan))
			}
			open := func() (*session, error) { return openMutableSession(cmd.Context(), g, "remove finished groups") }
			if dryRun { // changes nothing, so read-only targets may look
				open = func() (*session, error) { return openSession(cmd.Context(), g) }
			}
			s, err := open()
			if err != nil {
				return err
			}
			defer s.Close()
			var cutoff time.Time
			if olderThan > 0 {
				cutoff = time.Now().Add(-olderThan)
			}
			gone, err := s.Runtime.PruneFinished(cmd.Context(), cutoff, dryRun)
			if err != nil {
				return fmt.Errorf("prune: %w", err)
			}
			verb := "removed"
			if dryRun {
				verb = "would remove"
			}
			out := cmd.OutOrStdout()
			for _, grp := range gone {
				fmt.Fprintf(out, "%s pgid %d  %s\n", verb, grp.Pgid, dash(clip(strings.Join(grp.Argv, " "), 60)))
			}
			fmt.Fprintf(out, "%s %d finished group(s)\n", verb, len(gone))
			return nil
		},
	}
	f := c.Flags()
	f.DurationVar(&olderThan, "older-than", 0, "only groups whose state last changed longer ago than this")
	f.BoolVar(&dryRun, "dry-run", false, "print what would be removed and remove nothing")
	return c
}
