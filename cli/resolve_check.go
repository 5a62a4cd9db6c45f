package cli

import (
	"context"
	"errors"
	"fmt"

	"sandtop/backend/seam"
)

// checkProgram fails early when argv[0] is missing from the sandbox, so
// "run -- typo" is an error here and not a silent exit 127 there. On stock
// envd the seam asks a shell's command -v, which also names builtins
// (command -v true prints "true") that env would still find on PATH, so
// only its "missing" verdicts count.
func checkProgram(ctx context.Context, rt *seam.Runtime, program string, env []seam.EnvEntry) error {
	_, err := rt.ResolveExecutable(ctx, program, env)
	switch {
	case err == nil, errors.Is(err, seam.ErrNoFile):
		return nil
	case errors.Is(err, seam.ErrNotExecutable), errors.Is(err, seam.ErrRelativeCommand):
		return err
	}
	return fmt.Errorf("check %s: %w", program, err)
}
