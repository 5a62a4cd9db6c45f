package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend/seam"
	"sandtop/backend/seam/control"
	"sandtop/config"
)

// signalOptions is what "sandtop signal" was asked for.
type signalOptions struct {
	sig   syscall.Signal
	pgids []int
}

func newSignalCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "signal SIG PGID...",
		Short: "Send a signal to every process of one or more process groups",
		Example: `  sandtop signal INT 4123
  sandtop signal SIGSTOP 4123 4130
  sandtop signal 10 4123`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return signalNameCompletion(), cobra.ShellCompDirectiveNoFileComp
			}
			return liveGroups(cmd, f), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := parseSignal(args[0])
			if err != nil {
				return usagef(err)
			}
			pgids, err := parsePGIDs(args[1:])
			if err != nil {
				return err
			}
			return runSignal(cmd.Context(), f, signalOptions{sig: sig, pgids: pgids})
		},
	}
}

// runSignal sends opts.sig to each group, reporting every group it could
// not reach.
func runSignal(ctx context.Context, f *factory, opts signalOptions) error {
	s, err := f.MutableSession(ctx, "send a signal")
	if err != nil {
		return err
	}
	defer s.Close()
	var failed []error
	for _, pgid := range opts.pgids {
		delivered, err := s.Runtime.Control().SignalGroup(ctx, pgid, opts.sig)
		switch {
		case err != nil:
			failed = append(failed, fmt.Errorf("process group %d: %w", pgid, err))
		case !delivered:
			failed = append(failed, errNoGroup(pgid))
		default:
			fmt.Fprintf(f.Out, "sent %s to process group %d\n", sigName(opts.sig), pgid)
		}
	}
	return errors.Join(failed...)
}

// parsePGIDs reads pgid arguments, each once.
func parsePGIDs(args []string) ([]int, error) {
	var pgids []int
	for _, a := range args {
		pgid, err := parsePositiveID("pgid", a)
		if err != nil {
			return nil, err
		}
		if !slices.Contains(pgids, pgid) {
			pgids = append(pgids, pgid)
		}
	}
	return pgids, nil
}

// killOptions is what "sandtop kill" was asked for.
type killOptions struct {
	pgids []int
	// grace is --grace when graceSet; otherwise the config's grace applies.
	grace    time.Duration
	graceSet bool
}

func newKillCmd(f *factory) *cobra.Command {
	var opts killOptions
	c := &cobra.Command{
		Use:   "kill PGID... [--grace 5s]",
		Short: "Tear process groups down: SIGTERM, grace, SIGKILL, until each is proven empty",
		Long: `Runs the teardown transaction on each process group, all at once, and
prints each phase: SIGTERM to the whole group, up to --grace for it to
empty, then SIGKILL and up to --grace again. It succeeds only once every
group is proven empty (zombies do not count); otherwise it fails, naming
the groups, and may be retried.`,
		Example: `  sandtop kill 4123
  sandtop kill $(sandtop ls -o name --tag build) --grace 2s`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: pgidArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			pgids, err := parsePGIDs(args)
			if err != nil {
				return err
			}
			opts.pgids, opts.graceSet = pgids, flagSet(cmd.Flags(), "grace")
			return runKill(cmd.Context(), f, opts)
		},
	}
	c.Flags().DurationVar(&opts.grace, "grace", config.DefaultGrace, "wait between SIGTERM and SIGKILL (default: the config's grace)")
	return c
}

// runKill tears every group down at once, printing each phase, and fails
// unless each is proven empty. A group that is not live is refused before
// any is touched.
func runKill(ctx context.Context, f *factory, opts killOptions) error {
	s, err := f.MutableSession(ctx, "tear down a group")
	if err != nil {
		return err
	}
	defer s.Close()
	grace := opts.grace
	if !opts.graceSet {
		grace = s.cfg.Grace
	}
	if grace <= 0 {
		return usagef(fmt.Errorf("--grace %s must be positive", grace))
	}
	// One reading of the table for every group: on stock envd each
	// reading is a command.
	rows, err := s.Runtime.Control().Processes(ctx)
	if err != nil {
		return err
	}
	for _, pgid := range opts.pgids {
		if !control.GroupLiveIn(rows, pgid) {
			return fmt.Errorf("no live process group %d in this sandbox (see 'sandtop ls')", pgid)
		}
	}
	// Every group gets its SIGTERM at once, so the grace is waited for
	// once, not once per group.
	var wg sync.WaitGroup
	errs := make([]error, len(opts.pgids))
	out := &lockedWriter{w: f.Out}
	for i, pgid := range opts.pgids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = teardownPrinting(ctx, out, s, pgid, grace)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// lockedWriter lets concurrent teardowns print whole lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// teardownPrinting runs TeardownGroup and prints each phase as it happens.
func teardownPrinting(ctx context.Context, w io.Writer, s *session, pgid int, grace time.Duration) error {
	start := time.Now()
	err := s.Runtime.TeardownGroup(ctx, pgid, grace, func(ev seam.TeardownEvent) {
		at := ev.At.Sub(start).Round(time.Millisecond)
		switch ev.Phase {
		case seam.PhaseTermSent:
			if ev.Err != nil {
				fmt.Fprintf(w, "%7s  SIGTERM to group %d failed: %v\n", at, pgid, ev.Err)
			} else {
				fmt.Fprintf(w, "%7s  SIGTERM sent to group %d\n", at, pgid)
			}
		case seam.PhaseWaiting:
			fmt.Fprintf(w, "%7s  waiting up to %s for the group to empty\n", at, ev.Deadline.Sub(ev.At).Round(time.Millisecond))
		case seam.PhaseKillSent:
			fmt.Fprintf(w, "%7s  SIGKILL sent to group %d (members outlived the grace)\n", at, pgid)
		case seam.PhaseEmpty:
			for _, e := range ev.Escapees {
				fmt.Fprintf(w, "%7s  ended escapee %d (%s), which had left the group\n", at, e.Pid, escapeeName(e))
			}
			fmt.Fprintf(w, "%7s  group %d is empty\n", at, pgid)
		case seam.PhaseFailed:
			fmt.Fprintf(w, "%7s  teardown of group %d failed: %v\n", at, pgid, ev.Err)
		}
	})
	return err
}

func escapeeName(e seam.Escapee) string {
	if len(e.Argv) > 0 {
		return clip(strings.Join(e.Argv, " "), 60)
	}
	return e.Comm
}
