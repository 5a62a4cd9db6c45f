package backend

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"sandtop/backend/gen/process/processconnect"
)

// Tearing down an agent's process group follows the seam's termination
// transaction (spec/seam.md §2.7): TERM to the group, a grace poll, KILL,
// then a bounded proof that no live (non-zombie) member is left. It goes
// through kill and ps run as control commands, so it works on stock envd.
//
// TODO(seam): switch to the seam's group teardown once it is exported, so
// there is one transaction (and the extension's SignalGroup where offered).

// dshPollInterval is how often the liveness of a group is re-read.
const dshPollInterval = 50 * time.Millisecond

// ErrDshUnpublished refuses to signal a group whose pgid is unknown.
var ErrDshUnpublished = errors.New("dsh: no valid process-group id was published; nothing is safe to signal")

// TeardownDsh terminates agent group g: TERM, up to grace for it to empty,
// then KILL and up to grace again to prove it empty. A settled group is a
// no-op. The error names the pgid that survived; a later call may retry.
func TeardownDsh(ctx context.Context, proc processconnect.ProcessClient, g DshGroup, grace time.Duration) error {
	if g.Pgid <= 1 {
		return fmt.Errorf("%w (%s)", ErrDshUnpublished, g.ID)
	}
	if grace <= 0 {
		return fmt.Errorf("dsh: teardown grace must be positive, got %v", grace)
	}
	for _, sig := range []string{"TERM", "KILL"} {
		live, err := dshGroupLive(ctx, proc, g.Pgid)
		if err != nil {
			return err
		}
		if !live {
			return nil
		}
		// A non-zero exit means the group vanished meanwhile: fine.
		if _, err := runControl(ctx, proc, dshControlEnv, []string{"kill", "-" + sig, "--", "-" + strconv.Itoa(g.Pgid)}, nil); err != nil {
			return fmt.Errorf("dsh: SIG%s to process group %d: %w", sig, g.Pgid, err)
		}
		if gone, err := dshWaitEmpty(ctx, proc, g.Pgid, grace); err != nil || gone {
			return err
		}
	}
	return fmt.Errorf("dsh: process group %d (%s) remained live after SIGKILL", g.Pgid, g.ID)
}

var dshControlEnv = map[string]string{"LC_ALL": "C"}

// dshWaitEmpty polls until pgid has no live member or wait has passed.
func dshWaitEmpty(ctx context.Context, proc processconnect.ProcessClient, pgid int, wait time.Duration) (bool, error) {
	deadline := time.Now().Add(wait)
	for {
		live, err := dshGroupLive(ctx, proc, pgid)
		if err != nil || !live {
			return !live && err == nil, err
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(dshPollInterval):
		}
	}
}

// dshGroupLive reads the process table and says whether pgid has a member
// that is neither a zombie nor dead.
func dshGroupLive(ctx context.Context, proc processconnect.ProcessClient, pgid int) (bool, error) {
	r, err := runControl(ctx, proc, dshControlEnv, []string{"ps", "-eo", "pgid=,sid=,stat="}, nil)
	if err != nil {
		return false, fmt.Errorf("dsh: liveness of process group %d: %w", pgid, err)
	}
	if r.code != 0 {
		return false, controlFailure("dsh: ps", r)
	}
	snap, err := parseDshScan(append([]byte("--ps--\x00"), r.stdout...))
	if err != nil {
		return false, err
	}
	return snap.groupLive(pgid), nil
}
