package seam

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"sandtop/backend/seam/control"
)

// probeScript prints the login home of the sandbox user, NUL, then the
// environment a command gets from the daemon (env -0). Shell artefacts are
// removed; HOME is replaced by the passwd entry because a daemon's own HOME
// need not be the user's.
const probeScript = `home=$(getent passwd "$(id -u)" | cut -d: -f6)
if [ -z "$home" ] || [ ! -d "$home" ]; then exit 3; fi
printf '%s\0' "$home"
exec env -u _ -u SHLVL -u PWD -u OLDPWD -u BASH_ENV -u ENV -0`

// probeEnvironment reads the sandbox's base environment through the daemon.
// The host's own environment is never consulted.
func probeEnvironment(ctx context.Context, run control.Runner) ([]string, error) {
	r, err := run.Run(ctx, probeScript, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("probe the sandbox environment: %w", err)
	}
	if r.ExitCode == 3 {
		return nil, errors.New("remote login home is invalid")
	}
	if r.ExitCode != 0 {
		return nil, fmt.Errorf("probe the sandbox environment: exit %d: %s", r.ExitCode, control.ClipText(r.Stderr))
	}
	return parseProbe(r.Stdout)
}

// parseProbe splits "home\0NAME=VALUE\0…" and overrides HOME. Entries that
// are empty, have no '=', or start with '=' are skipped.
func parseProbe(out []byte) ([]string, error) {
	home, rest, ok := bytes.Cut(out, []byte{0})
	if !ok || len(home) == 0 || home[0] != '/' {
		return nil, errors.New("remote login home is invalid")
	}
	env := []string{}
	for _, rec := range bytes.Split(rest, []byte{0}) {
		kv := string(rec)
		if i := strings.IndexByte(kv, '='); i <= 0 {
			continue
		}
		if strings.HasPrefix(kv, "HOME=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+string(home)), nil
}
