package wrapper

import (
	"path"
	"regexp"
	"strings"
)

// A DeepSeek Harness agent's provider (dsh-subprocess-e2b) starts each
// command as `setsid --wait -- bash -c <inner> dsh-e2b …` in an exec chain,
// so the pid its envd Start answered becomes the leader of a new session
// and group, with an argv of `bash -c <inner> dsh-e2b …` that names the
// command's state directory, <workspace>/.dsh-e2b/processes/<id>. That argv
// is how a process table tells the agent's groups, and their state, apart.

// AgentMarker is the inner script's $0 in the provider's wrapper argv.
const AgentMarker = "dsh-e2b"

// AgentRootDir is the provider's state root under its workspace.
const AgentRootDir = ".dsh-e2b"

var agentStateDir = regexp.MustCompile(`/(?:[^\s'"\x00/]+/)*` + regexp.QuoteMeta(AgentRootDir) + `/` + ProcessesDir + `/[A-Za-z0-9][A-Za-z0-9._-]*`)

// AgentStateDir recognises the leader of an agent's group from its argv and
// returns the state directory the argv names. It also takes ps's lossy
// rendering (argv joined by spaces) as a single element.
func AgentStateDir(argv []string) (string, bool) {
	line := strings.Join(argv, " ")
	first, rest, _ := strings.Cut(line, " ")
	if !strings.HasSuffix(first, "bash") || !strings.HasPrefix(rest, "-c ") {
		return "", false
	}
	if !strings.Contains(line, " "+AgentMarker+" ") && !strings.HasSuffix(line, " "+AgentMarker) {
		return "", false
	}
	dir := agentStateDir.FindString(line)
	return dir, dir != ""
}

// AgentRoot is the state root holding an agent's state directory.
func AgentRoot(stateDir string) string { return path.Dir(path.Dir(stateDir)) }

// SandtopStateDir recognises the inner half of sandtop's own wrapper:
// bash … Marker STATEDIR … and returns STATEDIR.
func SandtopStateDir(argv []string) (string, bool) {
	for i, a := range argv {
		if a == Marker && i+1 < len(argv) && strings.HasPrefix(argv[i+1], "/") {
			return argv[i+1], true
		}
	}
	return "", false
}
