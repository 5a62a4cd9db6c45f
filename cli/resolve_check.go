package cli

import (
	"context"
	"fmt"
	"strings"

	"sandtop/backend"
)

// checkProgram fails early when argv[0] is missing from the sandbox, so
// "run -- typo" is an error here and not a silent exit 127 there. The
// seam's resolver also rejects names that resolve to a shell builtin
// (command -v true prints "true"), which env would still find on PATH, so
// only its "missing" verdicts count.
func checkProgram(ctx context.Context, rt *backend.Runtime, program string, env []backend.EnvEntry) error {
	_, err := rt.ResolveExecutable(ctx, program, env)
	if err == nil {
		return nil
	}
	msg := err.Error()
	if strings.Contains(msg, "was not found") || strings.Contains(msg, "is not an executable") || strings.Contains(msg, "relative path") {
		return err
	}
	if strings.Contains(msg, "did not resolve to one absolute path") {
		return nil
	}
	return fmt.Errorf("check %s: %w", program, err)
}
