package cli

import (
	"context"
	"errors"
	"fmt"

	"sandtop/backend"
)

// checkProgram fails early when argv[0] is missing from the sandbox, so
// "run -- typo" is an error here and not a silent exit 127 there. On stock
// envd the seam asks a shell's command -v, which also names builtins
// (command -v true prints "true") that env would still find on PATH, so
// only its "missing" verdicts count.
func checkProgram(ctx context.Context, rt *backend.Runtime, program string, env []backend.EnvEntry) error {
	_, err := rt.ResolveExecutable(ctx, program, env)
	switch {
	case err == nil, errors.Is(err, backend.ErrNoFile):
		return nil
	case errors.Is(err, backend.ErrNotExecutable), errors.Is(err, backend.ErrRelativeCommand):
		return err
	}
	return fmt.Errorf("check %s: %w", program, err)
}
