package cli

import (
	"context"
	"errors"
	"fmt"
	"sandtop/backend/seam"
	"sandtop/sandbox"
	"time"

	"github.com/spf13/cobra"
)

// addSandboxCommands adds the commands that talk to a sandbox.
// Each gets its streams and its connection from the factory f, built over g.
func addSandboxCommands(root *cobra.Command, g *globalFlags) {
	f := newFactory(g)
	root.AddCommand(
		inGroup(groupWatch, newLsCmd(f)),
		inGroup(groupWatch, newLogsCmd(f)),
		inGroup(groupWatch, newDescribeCmd(f)),
		inGroup(groupWatch, newAttachCmd(f)),
		inGroup(groupAct, newRunCmd(f)),
		inGroup(groupAct, newTermCmd(f)),
		inGroup(groupAct, newSignalCmd(f)),
		inGroup(groupAct, newKillCmd(f)),
		inGroup(groupAct, newPruneCmd(f)),
		inGroup(groupAct, newDemoCmd(g, f)),
	)
}

// teardownLocalWork tears down every live group and terminal of the local
// sandbox, printing each, before "daemon stop" stops the daemon.
func teardownLocalWork(cmd *cobra.Command, g *globalFlags, grace time.Duration) error {
	local := *g
	local.target = targetFlags{names: []string{"local"}}
	s, err := openConnection(cmd.Context(), &local)
	if err != nil {
		return err
	}
	defer s.Close()
	w := cmd.OutOrStdout()
	var errs []error
	snap, err := s.Runtime.Snapshot(cmd.Context(), seam.WatchOptions{})
	if err != nil {
		return err
	}
	for _, ti := range snap.Terminals {
		if !ti.Sandtop {
			continue
		}
		if err := terminateTerminal(cmd.Context(), s, ti.PID); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "terminal %d ended\n", ti.PID)
	}
	for _, grp := range snap.Groups {
		// sandtop's own groups: those published under its runtime root.
		if grp.PGID <= 1 || grp.Origin != sandbox.OriginSandtop || grp.StateDir == "" || !grp.Live() {
			continue
		}
		if err := s.Runtime.TeardownGroup(cmd.Context(), grp.PGID, grace, nil); err != nil {
			errs = append(errs, err)
			continue
		}
		fmt.Fprintf(w, "group %d torn down\n", grp.PGID)
	}
	return errors.Join(errs...)
}

// terminateTerminal ends a terminal's whole session.
func terminateTerminal(ctx context.Context, s *connection, pid int) error {
	t, err := s.Runtime.AttachTerminal(ctx, pid)
	if err != nil {
		return err
	}
	return t.Terminate(ctx)
}
