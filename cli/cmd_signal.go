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
	"sandtop/config"
	"sandtop/sandbox"
)

// signalOptions is what "sandtop signal" was asked for.
type signalOptions struct {
	sig  syscall.Signal
	refs []groupRef
}

func newSignalCmd(f *factory) *cobra.Command {
	return &cobra.Command{
		Use:   "signal SIG [SANDBOX/]PGID...",
		Short: "Send a signal to every process of one or more process groups",
		Long: `Sends SIG to every process of each group. A bare PGID is in the sandbox the
target flags select; SANDBOX/PGID names a group in any sandbox, SANDBOX as
'sandtop ls -A' prints it. Every group that exists gets the signal; each
one that does not is named on stderr, and then the exit status is 1. No
PGID at all (an empty $(sandtop ls -o name ...)) does nothing and exits 0.`,
		Example: `  sandtop signal INT 4123
  sandtop signal SIGSTOP 4123 4130
  sandtop signal 10 4123 e2b:isb7x2k/812`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
			if len(args) == 0 {
				return signalNameCompletion(), cobra.ShellCompDirectiveNoFileComp
			}
			return liveGroups(cmd, f, toComplete), cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := parseSignal(args[0])
			if err != nil {
				return usagef(err)
			}
			refs, err := parseGroupRefs(args[1:])
			if err != nil {
				return err
			}
			return runSignal(cmd.Context(), f, signalOptions{sig: sig, refs: refs})
		},
	}
}

// runSignal sends opts.sig to each group, in its own sandbox, reporting
// every group it could not reach.
func runSignal(ctx context.Context, f *factory, opts signalOptions) error {
	if len(opts.refs) == 0 {
		fmt.Fprintln(f.ErrOut, "sandtop: no process group named; nothing signalled")
		return nil
	}
	in, err := openSandboxes(ctx, f, opts.refs, "send a signal")
	if err != nil {
		return err
	}
	defer in.close()
	var failed []error
	for _, sg := range in {
		for _, ref := range sg.refs {
			delivered, err := sg.s.Runtime.Signal(ctx, ref.pgid, opts.sig)
			switch {
			case err != nil:
				failed = append(failed, fmt.Errorf("process group %s: %w", ref, err))
			case !delivered:
				failed = append(failed, sg.noGroup(ref))
			default:
				fmt.Fprintf(f.Out, "sent %s to process group %s\n", sigName(opts.sig), ref)
			}
		}
	}
	return errors.Join(failed...)
}

// sandboxGroups are the groups named in one sandbox, and its connection.
type sandboxGroups struct {
	s    *connection
	refs []groupRef
}

// noGroup is errNoGroup, naming the sandbox when the operator did.
func (sg sandboxGroups) noGroup(ref groupRef) error {
	if ref.sandbox == "" {
		return errNoGroup(ref.pgid)
	}
	return fmt.Errorf("no process group %d in sandbox %s (see 'sandtop ls -A')", ref.pgid, ref.sandbox)
}

type sandboxesGroups []sandboxGroups

func (in sandboxesGroups) close() {
	for _, sg := range in {
		sg.s.Close()
	}
}

// openSandboxes opens, for a change (what says which), each sandbox the
// refs name, once: two names for one sandbox share its connection.
func openSandboxes(ctx context.Context, f *factory, refs []groupRef, what string) (sandboxesGroups, error) {
	var in sandboxesGroups
	byName := map[string]int{}
	for _, ref := range refs {
		i, ok := byName[ref.sandbox]
		if !ok {
			s, err := f.MutableConnectionIn(ctx, ref.sandbox, what)
			if err != nil {
				in.close()
				return nil, err
			}
			i = slices.IndexFunc(in, func(sg sandboxGroups) bool { return sg.s.Target.Name == s.Target.Name })
			if i < 0 {
				in = append(in, sandboxGroups{s: s})
				i = len(in) - 1
			} else {
				s.Close()
			}
			byName[ref.sandbox] = i
		}
		in[i].refs = append(in[i].refs, ref)
	}
	return in, nil
}

// killOptions is what "sandtop kill" was asked for.
type killOptions struct {
	refs []groupRef
	// grace is --grace when graceSet; otherwise the config's grace applies.
	grace    time.Duration
	graceSet bool
}

func newKillCmd(f *factory) *cobra.Command {
	var opts killOptions
	c := &cobra.Command{
		Use:   "kill [SANDBOX/]PGID... [--grace 5s]",
		Short: "Tear process groups down: SIGTERM, grace, SIGKILL, until each is proven empty",
		Long: `Runs the teardown transaction on each process group, all at once, and
prints each phase: SIGTERM to the whole group, up to --grace for it to
empty, then SIGKILL and up to --grace again. It succeeds only once every
group is proven empty (zombies do not count); otherwise it fails, naming
the groups, and may be retried. A bare PGID is in the sandbox the target
flags select; SANDBOX/PGID names a group in any sandbox, SANDBOX as
'sandtop ls -A' prints it, and one call may mix sandboxes.

Like kubectl delete, it acts on every live group named and reports each
one that is not live (finished, or never there); then it exits 1. No
PGID at all (an empty $(sandtop ls -o name ...)) does nothing and exits 0.`,
		Example: `  sandtop kill 4123
  sandtop kill $(sandtop ls -o name --tag build) --grace 2s
  sandtop kill $(sandtop ls -A -o name --tag build)`,
		ValidArgsFunction: pgidArgs(f),
		RunE: func(cmd *cobra.Command, args []string) error {
			refs, err := parseGroupRefs(args)
			if err != nil {
				return err
			}
			opts.refs, opts.graceSet = refs, flagSet(cmd.Flags(), "grace")
			return runKill(cmd.Context(), f, opts)
		},
	}
	c.Flags().DurationVar(&opts.grace, "grace", config.DefaultGrace, "wait between SIGTERM and SIGKILL (default: the config's grace)")
	return c
}

// runKill tears every live group named down at once, each in its
// sandbox, printing each phase, and fails unless each is proven empty. A
// group that is not live is reported, after the live ones are torn down.
func runKill(ctx context.Context, f *factory, opts killOptions) error {
	if opts.graceSet && opts.grace <= 0 {
		return usagef(fmt.Errorf("--grace %s must be positive", opts.grace))
	}
	if len(opts.refs) == 0 {
		fmt.Fprintln(f.ErrOut, "sandtop: no process group named; nothing torn down")
		return nil
	}
	in, err := openSandboxes(ctx, f, opts.refs, "tear down a group")
	if err != nil {
		return err
	}
	defer in.close()
	grace := opts.grace
	if !opts.graceSet {
		grace = in[0].s.cfg.Grace
	}
	if grace <= 0 {
		return usagef(fmt.Errorf("--grace %s must be positive", grace))
	}
	// One reading of a sandbox for all its groups (on stock envd each
	// reading is a command), the one ls makes: what ls shows as live, kill
	// tears down. On sandtop's daemon a few named groups are read alone,
	// not the whole table.
	var missing []error
	live := make([][]groupRef, len(in))
	for i, sg := range in {
		pgids := make([]int, len(sg.refs))
		for j, ref := range sg.refs {
			pgids[j] = ref.pgid
		}
		snap, err := sg.s.Runtime.Snapshot(ctx, seam.WatchOptions{LiveOnly: true, Groups: pgids})
		if err != nil {
			return err
		}
		for _, ref := range sg.refs {
			switch {
			case liveGroupIn(snap, ref.pgid):
				live[i] = append(live[i], ref)
			case ref.sandbox != "":
				missing = append(missing, fmt.Errorf("no live process group %d in sandbox %s (see 'sandtop ls -A')", ref.pgid, ref.sandbox))
			default:
				missing = append(missing, fmt.Errorf("no live process group %d in this sandbox (see 'sandtop ls')", ref.pgid))
			}
		}
	}
	// Every group gets its SIGTERM at once, so the grace is waited for
	// once, not once per group.
	var wg sync.WaitGroup
	var errs []error
	var mu sync.Mutex
	out := &lockedWriter{w: f.Out}
	for i, sg := range in {
		for _, ref := range live[i] {
			wg.Go(func() {
				if err := teardownPrinting(ctx, out, sg.s, ref, grace); err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	return errors.Join(append(missing, errs...)...)
}

// liveGroupIn says whether snap shows group pgid live.
func liveGroupIn(snap sandbox.Snapshot, pgid int) bool {
	for i := range snap.Groups {
		if g := &snap.Groups[i]; g.PGID == pgid && g.Live() {
			return true
		}
	}
	return false
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
func teardownPrinting(ctx context.Context, w io.Writer, s *connection, ref groupRef, grace time.Duration) error {
	start := time.Now()
	pgid := ref // prints as the operator named it
	err := s.Runtime.TeardownGroup(ctx, ref.pgid, grace, func(ev seam.TeardownEvent) {
		at := ev.At.Sub(start).Round(time.Millisecond)
		switch ev.Phase {
		case seam.PhaseTermSent:
			if ev.Err != nil {
				fmt.Fprintf(w, "%7s  SIGTERM to group %s failed: %v\n", at, pgid, ev.Err)
			} else {
				fmt.Fprintf(w, "%7s  SIGTERM sent to group %s\n", at, pgid)
			}
		case seam.PhaseWaiting:
			fmt.Fprintf(w, "%7s  waiting up to %s for the group to empty\n", at, ev.Deadline.Sub(ev.At).Round(time.Millisecond))
		case seam.PhaseKillSent:
			fmt.Fprintf(w, "%7s  SIGKILL sent to group %s (members outlived the grace)\n", at, pgid)
		case seam.PhaseEmpty:
			for _, e := range ev.Escapees {
				fmt.Fprintf(w, "%7s  ended escapee %d (%s), which had left the group\n", at, e.Pid, escapeeName(e))
			}
			fmt.Fprintf(w, "%7s  group %s is empty\n", at, pgid)
		case seam.PhaseFailed:
			fmt.Fprintf(w, "%7s  teardown of group %s failed: %s\n", at, pgid, clip(fmt.Sprint(ev.Err), 1000))
		}
	})
	return err
}

func escapeeName(e seam.Escapee) string {
	if len(e.Argv) > 0 {
		return clip(strings.Join(e.Argv, " "), 60)
	}
	return clip(e.Comm, 60)
}
