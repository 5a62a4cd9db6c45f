package control

import (
	"context"
	"errors"
	"strings"
	"time"

	"sandtop/wrapper"
)

// ErrUnsupported: the daemon does not know the call (one older than it).
var ErrUnsupported = errors.New("not supported by this daemon")

// StateFiles is what a reader found in one process state directory.
// A nil file was absent; a size of -1 means no such spill.
type StateFiles struct {
	ID                     string
	ModTime                time.Time // of the directory; zero when unknown
	Pid, ExitCode          *string
	Signal, Tag, Argv      *string
	StdoutSize, StderrSize int64
	// OutputAt is the newest modification of the spill files: when the
	// group last wrote output (or when the files were made, if it never
	// did); zero when there are none or the plane cannot tell.
	OutputAt time.Time
	// Problem and Supervised: what sandtop's shim leaves when it could not
	// publish the exit status (see wrapper.ProblemFile).
	Problem    *string
	Supervised bool
	// SupervisorRunning: the group's shim still runs and has published
	// neither an exit status nor a problem (sandtop's daemon only). With no
	// live process left in the group, the status is about to come.
	SupervisorRunning bool
}

// StateFilesFrom is what a state directory holds, from its entries and a
// reader of its files, which it asks only for what the judgement needs.
func StateFilesFrom(id string, entries []DirEntry, readFile func(name string) *string) StateFiles {
	f := StateFiles{ID: id, StdoutSize: -1, StderrSize: -1}
	has := map[string]bool{}
	for _, e := range entries {
		has[e.Name] = true
		switch e.Name {
		case wrapper.StdoutSpillFile:
			f.StdoutSize = e.Size
		case wrapper.StderrSpillFile:
			f.StderrSize = e.Size
		default:
			continue
		}
		if e.ModTime.After(f.OutputAt) {
			f.OutputAt = e.ModTime
		}
	}
	read := func(name string) *string {
		if !has[name] {
			return nil
		}
		return readFile(name)
	}
	f.Tag = read(wrapper.TagFile)
	if f.Pid = read(wrapper.PidFile); f.Pid == nil {
		return f
	}
	if f.ExitCode = read(wrapper.ExitCodeFile); f.ExitCode != nil && strings.TrimSpace(*f.ExitCode) != "" {
		if code, err := wrapper.ParseExitCode(*f.ExitCode); err == nil && code > 128 {
			f.Signal = read(wrapper.SignalFile)
		}
		// Only a command that has ended needs its argv from here: a live
		// leader shows it in the process table. One read less per poll.
		f.Argv = read(wrapper.ArgvFile)
	} else if has[wrapper.SupervisorFile] || has[wrapper.ProblemFile] {
		f.Supervised = has[wrapper.SupervisorFile]
		f.Problem = read(wrapper.ProblemFile)
	}
	return f
}

// AllStatesReader is a control plane that reads every state directory of
// the runtime root in one call (sandtop's daemon); ErrUnsupported when the
// daemon predates it.
type AllStatesReader interface {
	ReadAllStates(ctx context.Context, root string) ([]StateFiles, error)
}
