package main

import (
	"fmt"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"sandtop/backend"
)

func newSignalCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "signal SIG PGID",
		Short: "Send a signal to every member of a process group",
		Example: `  sandtop signal INT 4123
  sandtop signal SIGSTOP 4123
  sandtop signal 10 4123`,
		Args: usageArgs(cobra.ExactArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error {
			sig, err := parseSignal(args[0])
			if err != nil {
				return usagef(err)
			}
			pgid, err := parsePositiveID("pgid", args[1])
			if err != nil {
				return err
			}
			s, err := openMutableSession(cmd.Context(), g, "send a signal")
			if err != nil {
				return err
			}
			defer s.Close()
			delivered, err := s.Runtime.Control().SignalGroup(cmd.Context(), pgid, sig)
			if err != nil {
				return err
			}
			if !delivered {
				return errNoGroup(pgid)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "sent %s to process group %d\n", sigName(sig), pgid)
			return nil
		},
	}
}

func newKillCmd(g *globalFlags) *cobra.Command {
	var grace time.Duration
	c := &cobra.Command{
		Use:   "kill PGID [--grace 5s]",
		Short: "Tear a process group down: SIGTERM, grace, SIGKILL, until it is proven empty",
		Long: `Runs the teardown transaction on a process group and prints each phase:
SIGTERM to the whole group, up to --grace for it to empty, then SIGKILL and
up to --grace again. It succeeds only once the group is proven empty
(zombies do not count); otherwise it fails and may be retried.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			pgid, err := parsePositiveID("pgid", args[0])
			if err != nil {
				return err
			}
			s, err := openMutableSession(cmd.Context(), g, "tear down a group")
			if err != nil {
				return err
			}
			defer s.Close()
			if !flagSet(cmd.Flags(), "grace") {
				grace = s.cfg.Grace
			}
			if grace <= 0 {
				return usagef(fmt.Errorf("--grace %s must be positive", grace))
			}
			alive, err := s.Runtime.Control().GroupAlive(cmd.Context(), pgid)
			if err != nil {
				return err
			}
			if !alive {
				return fmt.Errorf("no live process group %d in this sandbox (see 'sandtop ls')", pgid)
			}
			return teardownPrinting(cmd, s, pgid, grace)
		},
	}
	c.Flags().DurationVar(&grace, "grace", 5*time.Second, "wait between SIGTERM and SIGKILL (default: the config's grace)")
	return c
}

// teardownPrinting runs TeardownGroup and prints each phase as it happens.
func teardownPrinting(cmd *cobra.Command, s *session, pgid int, grace time.Duration) error {
	w := cmd.OutOrStdout()
	start := time.Now()
	err := s.Runtime.TeardownGroup(cmd.Context(), pgid, grace, func(ev backend.TeardownEvent) {
		at := ev.At.Sub(start).Round(time.Millisecond)
		switch ev.Phase {
		case backend.PhaseTermSent:
			if ev.Err != nil {
				fmt.Fprintf(w, "%7s  SIGTERM to group %d failed: %v\n", at, pgid, ev.Err)
			} else {
				fmt.Fprintf(w, "%7s  SIGTERM sent to group %d\n", at, pgid)
			}
		case backend.PhaseWaiting:
			fmt.Fprintf(w, "%7s  waiting up to %s for the group to empty\n", at, ev.Deadline.Sub(ev.At).Round(time.Millisecond))
		case backend.PhaseKillSent:
			fmt.Fprintf(w, "%7s  SIGKILL sent to group %d (members outlived the grace)\n", at, pgid)
		case backend.PhaseEmpty:
			for _, e := range ev.Escapees {
				fmt.Fprintf(w, "%7s  ended escapee %d (%s), which had left the group\n", at, e.Pid, escapeeName(e))
			}
			fmt.Fprintf(w, "%7s  group %d is empty\n", at, pgid)
		case backend.PhaseFailed:
			fmt.Fprintf(w, "%7s  teardown failed: %v\n", at, ev.Err)
		}
	})
	return err
}

func escapeeName(e backend.Escapee) string {
	if len(e.Argv) > 0 {
		return clip(strings.Join(e.Argv, " "), 60)
	}
	return e.Comm
}

func sigName(sig syscall.Signal) string {
	for n, v := range signalNames {
		if v == sig {
			return "SIG" + n
		}
	}
	return fmt.Sprintf("signal %d", int(sig))
}
