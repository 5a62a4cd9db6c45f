package wrapper

import (
	"path"
	"strings"
)

// On stock envd sandtop runs each group under its own Go supervisor (the
// sandtop executable, uploaded once into the runtime root's bin directory)
// where the sandbox can execute it, and under the bash wrapper where it
// cannot. The supervisor is the process envd starts: SupervisorDir names
// its binary's place, SuperviseSubcommand its mode, and its argv ends with
// the group's state directory, so a listing can fold it into the group.

// SuperviseSubcommand is the hidden first argument that makes the sandtop
// executable a standalone supervisor.
const SuperviseSubcommand = "__sandtop-supervise"

// SupervisorDir is where the supervisor's binaries live, under the runtime
// root: one per build, named SupervisorBinaryPrefix plus a prefix of its
// SHA-256, so a sandbox keeps every build it was given and reuses it.
const (
	SupervisorDir          = "bin"
	SupervisorBinaryPrefix = "sandtop-"
)

// SupervisorBinary is the path of the build whose hash (hex) is given.
func SupervisorBinary(runtimeRoot, sha256Hex string) string {
	if len(sha256Hex) > 16 {
		sha256Hex = sha256Hex[:16]
	}
	return path.Join(runtimeRoot, SupervisorDir, SupervisorBinaryPrefix+sha256Hex)
}

// Supervised recognises a standalone supervisor's argv (SUPERVISOR
// SuperviseSubcommand STATEDIR) and returns the group's state directory.
// It reads ps's rendering too: none of the three words holds a blank.
func Supervised(argv []string) (stateDir string, ok bool) {
	if len(argv) != 3 || argv[1] != SuperviseSubcommand {
		return "", false
	}
	if !strings.HasPrefix(path.Base(argv[0]), SupervisorBinaryPrefix) || !strings.Contains(argv[2], "/"+ProcessesDir+"/") {
		return "", false
	}
	return argv[2], true
}
