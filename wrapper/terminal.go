package wrapper

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	_ "embed"
)

// TerminalRunner is the bash script a terminal's PTY runs first. See
// terminal_runner.bash for what it does with its state directory.
//
//go:embed terminal_runner.bash
var TerminalRunner []byte

// Names of the private files in a terminal's state directory. The runner
// deletes all four once it has read them.
const (
	TerminalRunnerFile = "runner.bash"
	TerminalEnvFile    = "environment"
	TerminalArgvFile   = "argv"
	TerminalMarkerFile = "output-marker"
)

// TerminalsDir is the directory under the runtime root that holds one state
// directory per terminal, named by the terminal's id.
const TerminalsDir = "terminals"

// BoundaryPrefix starts every output boundary marker; 32 random hex digits
// follow it, so no bootstrap echo or program output can guess it.
const BoundaryPrefix = "sandtop-boundary:"

// BoundaryLen is the length in bytes of every marker NewBoundary returns.
const BoundaryLen = len(BoundaryPrefix) + 32

// NewBoundary returns a fresh private output boundary marker.
func NewBoundary() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("terminal output boundary: %w", err)
	}
	return BoundaryPrefix + hex.EncodeToString(b[:]), nil
}

// IsBoundary reports whether s has the exact shape of a boundary marker.
func IsBoundary(s string) bool {
	if len(s) != BoundaryLen || !strings.HasPrefix(s, BoundaryPrefix) {
		return false
	}
	for _, c := range s[len(BoundaryPrefix):] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// TerminalFiles holds the contents of the private files the runner reads.
type TerminalFiles struct {
	Runner      []byte
	Environment []byte
	Argv        []byte
	Marker      []byte
}

// Named lists the files with their names, in the order they should be
// written: the runner last, so a runner that exists has its inputs.
func (f TerminalFiles) Named() []NamedFile {
	return []NamedFile{
		{TerminalEnvFile, f.Environment},
		{TerminalArgvFile, f.Argv},
		{TerminalMarkerFile, f.Marker},
		{TerminalRunnerFile, f.Runner},
	}
}

// NamedFile is one private file of a state directory.
type NamedFile struct {
	Name string
	Data []byte
}

// NewTerminalFiles frames argv and the final child environment (NAME=VALUE
// entries, already scrubbed and merged) for the runner.
func NewTerminalFiles(argv, env []string, marker string) (TerminalFiles, error) {
	if len(argv) == 0 || argv[0] == "" {
		return TerminalFiles{}, errors.New("terminal argv needs a non-empty program")
	}
	// env(1) reads a leading NAME=VALUE word as an assignment, not a program.
	if strings.Contains(argv[0], "=") {
		return TerminalFiles{}, fmt.Errorf("terminal program %q must not contain '='", argv[0])
	}
	if !IsBoundary(marker) {
		return TerminalFiles{}, errors.New("terminal output boundary is malformed")
	}
	a, err := nulList("terminal argv", argv)
	if err != nil {
		return TerminalFiles{}, err
	}
	for _, kv := range env {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			return TerminalFiles{}, fmt.Errorf("terminal environment entry %q is not NAME=VALUE", kv)
		}
	}
	e, err := nulList("terminal environment", env)
	if err != nil {
		return TerminalFiles{}, err
	}
	return TerminalFiles{Runner: TerminalRunner, Environment: e, Argv: a, Marker: []byte(marker)}, nil
}

// nulList frames items as NUL-terminated entries; an item holding NUL has
// no representation and is refused.
func nulList(what string, items []string) ([]byte, error) {
	var b bytes.Buffer
	for i, it := range items {
		if strings.IndexByte(it, 0) >= 0 {
			return nil, fmt.Errorf("%s must not contain NUL bytes (entry %d)", what, i)
		}
		b.WriteString(it)
		b.WriteByte(0)
	}
	return b.Bytes(), nil
}
