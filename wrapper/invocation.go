// Package wrapper holds the bash wrapper, the Go helpers that build its
// invocation and parse what it publishes, and the state layout that the
// wrapper and both supervisors (sandtop/backend/shim) publish alike.
//
// The wrapper runs where neither supervisor does: on a daemon without
// sandtop's shim (stock envd) when the seam has not installed its
// standalone supervisor in the sandbox (switched off, no file upload, or a
// build the sandbox cannot run). sandtop's own daemon runs every group
// under its shim, and no wrapper.
//
// It is started with process.Process/Start as
// `bash --noprofile --norc -c <script>`. The outer half creates the private
// state directory, reads the child environment from the head of stdin into
// a file, and runs `setsid --wait bash -c <inner>` with an empty
// environment. The inner half leads the new session and process group: it
// publishes its pgid (to the `pid` file, and as a first line on stdout and
// on stderr), deletes the environment file once read, starts the requested
// argv with `env -i --default-signal <child env>`, tees spilled streams
// through `stdbuf -o0 head -c`, and publishes the program's exit status
// and, when the program died from a signal, that signal. The outer half
// then re-raises the signal on itself, so envd's end event carries it.
//
// Required in the sandbox: bash, env (coreutils >= 8.31 for
// --default-signal), setsid (util-linux, --wait), tee, head, rm, mkdir;
// stdbuf if present.
package wrapper

import (
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The two scripts, assembled from their parts. The outer half (the
// preparation, then outer.bash) starts the inner half under setsid; the
// inner half (the guard, its head, then the body) leads the new session.
var (
	//go:embed prepare.bash
	prepareScript string
	//go:embed outer.bash
	outerHalf string
	//go:embed guard.bash
	guardScript string
	//go:embed inner.bash
	innerHead string
	//go:embed body.bash
	bodyScript string

	outerScript = prepareScript + outerHalf
	innerScript = guardScript + innerHead + bodyScript
)

// Marker precedes the state directory in the argv of the inner half, which
// is how listings tell the wrapper apart.
const Marker = "sandtop-wrapper"

// PublishedPrefix starts the first line the wrapper writes to stdout, before
// any byte of the requested program: "sandtop-published <pgid>\n".
const PublishedPrefix = "sandtop-published "

// StdinMode says what the requested program's fd 0 is.
type StdinMode int

const (
	// StdinIgnore gives the program /dev/null.
	StdinIgnore StdinMode = iota
	// StdinForward gives the program the rest of the wrapper's stdin (after
	// the environment payload): used for both piped and batch stdin.
	StdinForward
)

// NoSpill marks a stream that is not spilled to a file.
const NoSpill int64 = -1

// Invocation describes one wrapped spawn.
type Invocation struct {
	// StateDir is the private state directory, normally StateDir(root, id).
	StateDir string
	// Argv is the requested program and its arguments; never shell-parsed.
	Argv  []string
	Stdin StdinMode
	// StdoutSpill and StderrSpill cap the spill files in bytes; NoSpill
	// (-1) means that stream is not spilled.
	StdoutSpill, StderrSpill int64
	// Tag, when set, is written to the state directory's tag file.
	Tag string
}

// Command returns the cmd and args for process.Process/Start. bash is the
// absolute path of bash in the sandbox (usually /bin/bash).
func (inv Invocation) Command(bash string) (string, []string, error) {
	if err := inv.validate(); err != nil {
		return "", nil, err
	}
	stdin := "ignore"
	if inv.Stdin == StdinForward {
		stdin = "forward"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "state=%s stdin_mode=%s out_cap=%d err_cap=%d tag=%s\n",
		Quote(inv.StateDir), stdin, inv.StdoutSpill, inv.StderrSpill, Quote(inv.Tag))
	fmt.Fprintf(&b, "inner=%s\n", Quote(innerScript))
	fmt.Fprintf(&b, "set -- %s\n", QuoteAll(inv.Argv))
	b.WriteString(outerScript)
	return bash, []string{"--noprofile", "--norc", "-c", b.String()}, nil
}

func (inv Invocation) validate() error {
	if !strings.HasPrefix(inv.StateDir, "/") {
		return fmt.Errorf("wrapper state directory %q is not absolute", inv.StateDir)
	}
	if strings.IndexByte(inv.StateDir, 0) >= 0 {
		return errors.New("wrapper state directory contains a NUL byte")
	}
	if len(inv.Argv) == 0 || inv.Argv[0] == "" {
		return errors.New("wrapper argv requires a non-empty program")
	}
	for i, a := range inv.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("argv[%d] contains a NUL byte", i)
		}
	}
	if strings.ContainsAny(inv.Tag, "\x00\r\n") {
		return errors.New("wrapper tag must be one line without NUL bytes")
	}
	for _, c := range []int64{inv.StdoutSpill, inv.StderrSpill} {
		if c < NoSpill {
			return fmt.Errorf("spill cap %d is negative", c)
		}
	}
	return nil
}

// EnvironmentPayload frames the child environment ("NAME=VALUE" entries) as
// the head of the wrapper's stdin: a decimal count line, then each entry
// followed by NUL.
func EnvironmentPayload(env []string) ([]byte, error) {
	n := 0
	for _, e := range env {
		if strings.IndexByte(e, 0) >= 0 {
			return nil, errors.New("environment entry contains a NUL byte")
		}
		n += len(e) + 1
	}
	out := make([]byte, 0, n+12)
	out = strconv.AppendInt(out, int64(len(env)), 10)
	out = append(out, '\n')
	for _, e := range env {
		out = append(out, e...)
		out = append(out, 0)
	}
	return out, nil
}
