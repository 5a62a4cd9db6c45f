package wrapper

import (
	"path"
	"slices"
	"strings"
)

// How a process table tells the wrapper's processes from the program's.
// These are the only readers of the wrapper's argv layout outside the
// scripts that make it.

// ArgvMarker stands for the wrapper's script (kilobytes, the same in every
// group) where a listing shows a wrapper process's argv.
const ArgvMarker = "<sandtop wrapper>"

// spillTeeFlag is the flag the inner half gives each spill's tee; no
// program's tee is likely to be started with exactly that first.
const spillTeeFlag = "--output-error=warn-nopipe"

// Inner recognises the inner half, the leader of the program's group:
// bash … Marker STATEDIR PARAMS… -- ARGV. It returns the state directory
// and the requested argv.
func Inner(argv []string) (stateDir string, requested []string, ok bool) {
	i := slices.Index(argv, Marker)
	if i < 1 || i+1 >= len(argv) {
		return "", nil, false
	}
	// The parameters are a path, numbers, a tag and absolute paths or "-"
	// (ten of them, nine before the tools were added): the first "--"
	// after them starts the requested argv.
	end := slices.Index(argv[i:], "--")
	if end < 10 || i+end+1 >= len(argv) {
		return "", nil, false
	}
	return argv[i+1], argv[i+end+1:], true
}

// Outer recognises the outer half, the process the daemon started for a
// spawn: its script begins by naming a process state directory,
// state='STATEDIR'. (A terminal's runner is not matched: it is the
// terminal.)
func Outer(argv []string) (stateDir string, ok bool) {
	for _, a := range argv {
		if rest, found := strings.CutPrefix(a, "state='"); found {
			if end := strings.IndexByte(rest, '\''); end > 0 && strings.Contains(rest[:end], "/"+ProcessesDir+"/") {
				return rest[:end], true
			}
		}
	}
	return "", false
}

// MayBeWrapper is a cheap test on a possibly lossy argv (ps joins argv
// with spaces) that says the exact argv is worth reading.
func MayBeWrapper(argv []string) bool {
	for _, a := range argv {
		if strings.Contains(a, Marker) || strings.Contains(a, "state='") {
			return true
		}
	}
	return false
}

// SpillTee recognises the tee the inner half starts for a spilled stream.
func SpillTee(argv []string) bool {
	return len(argv) > 1 && path.Base(argv[0]) == "tee" && argv[1] == spillTeeFlag
}
