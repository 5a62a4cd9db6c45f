package seam

import (
	"context"
	"fmt"
	"path"
	"strings"

	"sandtop/backend/seam/control"
)

// DefaultRuntimeRootIn is where, under the sandbox user's home, the seam
// keeps its state on a daemon that names no runtime root (stock envd):
// per user, and out of the way like the local daemon's state.
const DefaultRuntimeRootIn = ".local/state/sandtop"

// defaultRuntimeRoot asks the sandbox for its user's home (envd gives each
// command HOME from the user's passwd entry) and puts the root under it.
func defaultRuntimeRoot(ctx context.Context, run control.Runner) (string, error) {
	r, err := run.Run(ctx, `printf '%s' "$HOME"`, nil, nil)
	if err != nil {
		return "", fmt.Errorf("default runtime root: asking the sandbox for its home: %w", err)
	}
	home := strings.TrimSpace(string(r.Stdout))
	if r.ExitCode != 0 || !strings.HasPrefix(home, "/") {
		return "", fmt.Errorf("default runtime root: the sandbox user's home %q is not an absolute path; name a runtime root (--runtime-root or runtime_root)", home)
	}
	return path.Join(home, DefaultRuntimeRootIn), nil
}
