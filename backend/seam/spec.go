package seam

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"sandtop/backend/seam/control"
	"sandtop/backend/seam/terminal"
)

// SpawnSpec describes one process. Every field is explicit; the seam applies
// no defaults.
type SpawnSpec struct {
	// Argv[0] is the program; nothing is ever shell-interpreted. A caller
	// that wants a shell passes {"bash", "-c", script} itself.
	Argv []string
	// Cwd is the working directory in the sandbox.
	Cwd string
	// Stdio is the disposition of each stream.
	Stdio Stdio
	// Grace is the TERM→KILL escalation delay, and the bound on draining
	// collected or inherited output after the direct command exits. It
	// must be positive and at most MaxGrace.
	Grace time.Duration
	// Env entries are applied, in order, over the sandbox's scrubbed base
	// environment.
	Env []EnvEntry
	// Tag is an optional label (one line, at most MaxTagBytes). It is the
	// daemon's Start tag for the wrapper, so List shows it, and the wrapper
	// keeps it in the state directory, so Snapshot reports it after the
	// process exits and after a restart.
	Tag string
	// CheckProgram makes a program the sandbox cannot find an error of
	// Spawn, before anything starts (ResolveExecutable's ErrNotExecutable
	// or ErrRelativeCommand), where it would otherwise be a group that
	// exits 127. Sandtop's daemon checks within the Start; elsewhere Spawn
	// resolves the program first.
	CheckProgram bool
}

// Stdio is the disposition of the three standard streams.
type Stdio struct {
	Stdin          StdinMode
	Stdout, Stderr OutputMode
}

// StdinMode: exactly one of Ignore, Pipe or Data (non-nil) must be set.
type StdinMode struct {
	// Ignore gives the program /dev/null.
	Ignore bool
	// Pipe exposes Handle.Stdin for ongoing writes.
	Pipe bool
	// Data is written in full, then stdin is closed (best effort).
	Data *string
}

// StdinIgnore, StdinPipe and StdinData build the three stdin modes.
func StdinIgnore() StdinMode          { return StdinMode{Ignore: true} }
func StdinPipe() StdinMode            { return StdinMode{Pipe: true} }
func StdinData(data string) StdinMode { return StdinMode{Data: &data} }

// OutputMode: exactly one of Pipe, Inherit or Collect (non-nil) must be set.
// There is no "ignore" output mode.
type OutputMode struct {
	// Pipe exposes the raw stream as Handle.Stdout/Stderr, unbuffered by
	// the seam beyond a bounded window.
	Pipe bool
	// Inherit copies the stream to the Runtime's own stdout/stderr writer.
	Inherit bool
	// Collect keeps a bounded tail (and optionally a spill file).
	Collect *Collect
}

// Collect keeps the last MaxBytes of a stream in memory. With Spill, the
// whole stream is also written to a file in the sandbox, which is withdrawn
// once the stream outgrows Spill.MaxBytes.
type Collect struct {
	MaxBytes int64
	Spill    *Spill
}

// Spill caps the spill file.
type Spill struct {
	MaxBytes int64
}

// OutputPipe, OutputInherit and OutputCollect build the output modes.
func OutputPipe() OutputMode    { return OutputMode{Pipe: true} }
func OutputInherit() OutputMode { return OutputMode{Inherit: true} }

// KeptOutput is the mode of a group that is started and let go of (Detach):
// a small in-memory tail, and spill files of up to 64 MiB per stream kept
// in the sandbox for whoever reads them later ('sandtop logs').
func KeptOutput() OutputMode { return OutputCollect(64<<10, 64<<20) }

func OutputCollect(maxBytes int64, spillMaxBytes ...int64) OutputMode {
	c := &Collect{MaxBytes: maxBytes}
	if len(spillMaxBytes) > 0 {
		c.Spill = &Spill{MaxBytes: spillMaxBytes[0]}
	}
	return OutputMode{Collect: c}
}

// MaxGrace is the longest grace a spawn or terminal takes (2^31-1 ms).
const MaxGrace = control.MaxGrace

// ErrDisposing rejects new work once Dispose has begun.
var ErrDisposing = errors.New("service is disposing")

// MaxTagBytes bounds a spawn or terminal tag.
const MaxTagBytes = control.MaxTagBytes

// ValidateTag accepts a one-line tag of at most MaxTagBytes; empty is none.
func ValidateTag(tag string) error { return control.ValidateTag(tag) }

// TerminalUserTag reads a terminal's process tag: ok when tag marks a
// sandtop terminal, with the tag its starter gave it (empty when none).
// Listings show that tag, never the marker.
func TerminalUserTag(tag string) (user string, ok bool) {
	_, _, user, ok = terminal.ParseTag(tag)
	return user, ok
}

func (s *SpawnSpec) validate() error {
	if len(s.Argv) == 0 || s.Argv[0] == "" {
		return errors.New("subprocess argv requires a non-empty program")
	}
	for i, a := range s.Argv {
		if strings.IndexByte(a, 0) >= 0 {
			return fmt.Errorf("subprocess argv[%d] contains a NUL byte", i)
		}
	}
	if err := ValidateTag(s.Tag); err != nil {
		return err
	}
	if err := control.ValidateGrace("subprocess grace", s.Grace); err != nil {
		return err
	}
	if !strings.HasPrefix(s.Cwd, "/") {
		return fmt.Errorf("subprocess cwd %q must be an absolute path", s.Cwd)
	}
	if err := s.Stdio.Stdin.validate(); err != nil {
		return err
	}
	if err := s.Stdio.Stdout.validate("stdout"); err != nil {
		return err
	}
	if err := s.Stdio.Stderr.validate("stderr"); err != nil {
		return err
	}
	return ValidateEnv(s.Env)
}

func (m StdinMode) validate() error {
	n := 0
	if m.Ignore {
		n++
	}
	if m.Pipe {
		n++
	}
	if m.Data != nil {
		n++
	}
	if n != 1 {
		return errors.New("subprocess stdin mode must be exactly one of ignore, pipe or data")
	}
	return nil
}

func (m OutputMode) validate(stream string) error {
	n := 0
	if m.Pipe {
		n++
	}
	if m.Inherit {
		n++
	}
	if m.Collect != nil {
		n++
	}
	if n != 1 {
		return fmt.Errorf("subprocess %s mode must be exactly one of pipe, inherit or collect", stream)
	}
	if c := m.Collect; c != nil {
		if c.MaxBytes <= 0 {
			return fmt.Errorf("subprocess %s collect maxBytes must be positive (got %d)", stream, c.MaxBytes)
		}
		if c.Spill != nil && c.Spill.MaxBytes <= 0 {
			return fmt.Errorf("subprocess %s spill maxBytes must be positive (got %d)", stream, c.Spill.MaxBytes)
		}
	}
	return nil
}
