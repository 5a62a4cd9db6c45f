package cli

import (
	"context"
	"errors"
	"fmt"

	"sandtop/backend"
)

// openToStart opens the session a start (run, term) needs, resolves its
// working directory and checks its program, so a mistake is one error
// before anything starts. The caller closes the session.
func openToStart(ctx context.Context, g *globalFlags, verb, what, cwdFlag, program string, env []backend.EnvEntry) (*session, string, error) {
	s, err := openMutableSession(ctx, g, what)
	if err != nil {
		return nil, "", err
	}
	dir, err := s.spawnCwd(cwdFlag)
	if err == nil {
		err = checkProgram(ctx, s.Runtime, program, env)
		if err != nil {
			err = fmt.Errorf("%s: %w", verb, err)
		}
	}
	if err != nil {
		s.Close()
		return nil, "", err
	}
	return s, dir, nil
}

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
