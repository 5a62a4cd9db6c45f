package terminal

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"strconv"

	"sandtop/backend/seam/control"
	"sandtop/wrapper"
)

// writeStateScript creates a private state directory and fills it from
// stdin, which carries "<name> <length>\n" followed by that many bytes, per
// file. head -c reads exactly the length from a pipe, and read consumes its
// line byte by byte, so the files never bleed into each other.
const writeStateScript = `umask 077
dir=$1
mkdir -p -m 700 -- "${dir%/*}" && mkdir -m 700 -- "$dir" || exit 1
while IFS=' ' read -r name len; do
	case $name in '' | */* | .*) exit 2 ;; esac
	case $len in '' | *[!0-9]*) exit 2 ;; esac
	if [ "$len" -gt 0 ]; then
		head -c "$len" >"$dir/$name" || exit 1
	else
		: >"$dir/$name" || exit 1
	fi
	size=$(wc -c <"$dir/$name") && [ "$size" -eq "$len" ] || exit 3
done
`

// writeState creates the terminal's state directory (0700) and its private
// files (0600) in the sandbox. The contents travel on the control command's
// stdin, never in its argv or environment.
func (rt *Service) writeState(ctx context.Context, dir string, files []wrapper.NamedFile) error {
	var in bytes.Buffer
	for _, f := range files {
		in.WriteString(f.Name + " " + strconv.Itoa(len(f.Data)) + "\n")
		in.Write(f.Data)
	}
	r, err := rt.Runner.Run(ctx, writeStateScript, []string{dir}, in.Bytes())
	if err != nil {
		return fmt.Errorf("write terminal state %s: %w", dir, err)
	}
	if r.ExitCode != 0 {
		return fmt.Errorf("write terminal state %s: exit code %d: %s", dir, r.ExitCode, control.ClipText(r.Stderr))
	}
	return nil
}

// removeState deletes a terminal's state directory; only a directory named
// like a terminal id under <runtimeRoot>/terminals is ever removed.
func (rt *Service) removeState(ctx context.Context, id string) error {
	if !validTerminalID(id) {
		return fmt.Errorf("refusing to remove terminal state %q: not a terminal id", id)
	}
	dir := rt.stateDir(id)
	if path.Base(path.Dir(dir)) != wrapper.TerminalsDir {
		return fmt.Errorf("refusing to remove %s: not a terminal state directory", dir)
	}
	if err := rt.Plane.Remove(ctx, dir); err != nil {
		return fmt.Errorf("remove terminal state: %w", err)
	}
	return nil
}
