package seam

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"connectrpc.com/connect"

	sandtopv1 "sandtop/backend/gen/sandtop/v1"
	"sandtop/backend/seam/control"
)

// resolveScript checks an absolute path ($1 = "abs") or looks a bare name
// up on the given PATH ($1 = "name"), in the shared cwd.
const resolveScript = `case $1 in
abs) [ -f "$2" ] && [ -x "$2" ] || exit 3 ;;
name) PATH=$3 command -v -- "$2" || exit 4 ;;
esac`

// ResolveExecutable finds command in the sandbox. An absolute command must
// be an executable file and is returned as given. A bare name is looked up
// on the scrubbed sandbox PATH, or on env's PATH when env sets one; a
// relative hit is resolved against the runtime's cwd. A relative path with
// a separator has no defined base and is rejected, as is an empty command.
func (r *Runtime) ResolveExecutable(ctx context.Context, command string, env []EnvEntry) (string, error) {
	if command == "" {
		return "", errors.New("executable command must be non-empty")
	}
	if strings.IndexByte(command, 0) >= 0 {
		return "", errors.New("executable command contains a NUL byte")
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("resolve %s: %w", command, context.Cause(ctx))
	}
	if ext, ok := r.control.(control.Extension); ok && slices.Contains(r.info.Capabilities, capResolve) {
		return r.resolveByDaemon(ctx, ext, command, env)
	}
	if strings.HasPrefix(command, "/") {
		res, err := r.runner.Run(ctx, resolveScript, []string{"abs", command}, nil)
		if err != nil {
			return "", fmt.Errorf("resolve %s: %w", command, err)
		}
		if res.ExitCode != 0 {
			return "", control.ErrorOf(ErrNotExecutable, "%s is not an executable file in the sandbox", command)
		}
		return command, nil
	}
	if strings.Contains(command, "/") {
		return "", errRelativeCommand(command)
	}
	if err := ValidateEnv(env); err != nil {
		return "", err
	}
	pathVar, err := r.lookupPath(ctx, env)
	if err != nil {
		return "", err
	}
	runner := r.runner
	res, err := runner.RunIn(ctx, r.cfg.Cwd, resolveScript, []string{"name", command, pathVar})
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", command, err)
	}
	if ctx.Err() != nil {
		return "", fmt.Errorf("resolve %s: %w", command, context.Cause(ctx))
	}
	out := strings.TrimSpace(string(res.Stdout))
	if res.ExitCode != 0 || out == "" {
		return "", control.ErrorOf(ErrNotExecutable, "%s was not found on the sandbox PATH", command)
	}
	if strings.Contains(out, "\n") || !strings.Contains(out, "/") {
		return "", control.ErrorOf(ErrNoFile, "%s did not resolve to one absolute path (got %q)", command, control.ClipText(res.Stdout))
	}
	if !strings.HasPrefix(out, "/") {
		out = path.Join(r.cfg.Cwd, out)
	}
	return out, nil
}

// capResolve: the daemon answers Resolve, which looks the program up as its
// own exec would, without a shell.
const capResolve = "resolve"

// resolveByDaemon is ResolveExecutable in one call to sandtop's daemon.
func (r *Runtime) resolveByDaemon(ctx context.Context, ext control.Extension, command string, env []EnvEntry) (string, error) {
	abs := strings.HasPrefix(command, "/")
	var pathVar string
	if !abs {
		if strings.Contains(command, "/") {
			return "", errRelativeCommand(command)
		}
		if err := ValidateEnv(env); err != nil {
			return "", err
		}
		var err error
		if pathVar, err = r.lookupPath(ctx, env); err != nil {
			return "", err
		}
	}
	res, err := ext.Supervisor.Resolve(ctx, connect.NewRequest(&sandtopv1.ResolveRequest{Command: command, Path: pathVar, Cwd: r.cfg.Cwd}))
	switch {
	case err == nil:
		return res.Msg.GetPath(), nil
	case connect.CodeOf(err) == connect.CodeNotFound:
		return "", errProgramMissing(command)
	}
	return "", fmt.Errorf("resolve %s: %w", command, err)
}

// errProgramMissing is the daemon's verdict on a program it cannot find.
func errProgramMissing(command string) error {
	if strings.HasPrefix(command, "/") {
		return control.ErrorOf(ErrNotExecutable, "%s is not an executable file in the sandbox", command)
	}
	return control.ErrorOf(ErrNotExecutable, "%s was not found on the sandbox PATH", command)
}

func errRelativeCommand(command string) error {
	return control.ErrorOf(ErrRelativeCommand, "%s is a relative path; use an absolute path or a bare PATH name", command)
}

// lookupPath is the PATH a child would search: an explicit entry wins,
// then the sandbox's own.
func (r *Runtime) lookupPath(ctx context.Context, env []EnvEntry) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if env[i].Name == "PATH" {
			if env[i].Unset {
				return "", nil
			}
			return env[i].Value, nil
		}
	}
	base, err := r.baseEnvironment(ctx)
	if err != nil {
		return "", err
	}
	v, _ := envLookup(base, "PATH")
	return v, nil
}
