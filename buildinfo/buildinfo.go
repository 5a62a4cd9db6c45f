// Package buildinfo says which build of sandtop is running: its release
// and the commit it was built from, read from the binary itself
// (debug.ReadBuildInfo), so a daemon left running from an older build can
// be told apart from the client talking to it.
package buildinfo

import (
	"runtime/debug"
	"sync"
)

// Release is sandtop's release; a release build may set it with
// -ldflags "-X sandtop/buildinfo.Release=...".
var Release = "0.1.0"

var read = sync.OnceValues(func() (commit string, dirty bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	return commit, dirty
})

// Commit is the VCS revision the binary was built from, shortened to 12
// characters, with "-dirty" when the tree had changes; "" when the build
// did not record one (go run, go test).
func Commit() string {
	c, dirty := read()
	if len(c) > 12 {
		c = c[:12]
	}
	if c != "" && dirty {
		c += "-dirty"
	}
	return c
}

// Version is the release and, when known, the commit: "0.1.0+1a2b3c4d5e6f".
func Version() string {
	if c := Commit(); c != "" {
		return Release + "+" + c
	}
	return Release
}
