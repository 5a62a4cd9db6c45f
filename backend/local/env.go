package local

import (
	"regexp"
	"strings"
	"sync"
)

// keptVars are the caller's variables a detached daemon inherits. The
// daemon passes its environment on to every process it starts, so the
// list is deliberately short: what a shell and common tools need to work.
var keptVars = map[string]bool{
	"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true,
	"LANG": true, "LANGUAGE": true, "TZ": true, "TMPDIR": true, "TERM": true,
	"XDG_RUNTIME_DIR": true, "XDG_STATE_HOME": true, "XDG_CONFIG_HOME": true,
	"XDG_CACHE_HOME": true, "XDG_DATA_HOME": true,
	EnvRuntimeDir: true, EnvStateDir: true,
	// Coverage output of an instrumented test binary.
	"GOCOVERDIR": true,
}

// credentialShaped matches names that look like they carry a secret. Such
// a variable is dropped even when its name is otherwise allowed (LC_TOKEN).
// It is compiled on first use: only a start of the daemon needs it, and
// every CLI call would pay for it at init.
var credentialShaped = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH|COOKIE|SESSION)`)
})

// CuratedEnv returns the environment for a detached daemon: the allowed
// variables of environ (plus LC_*), minus anything credential-shaped.
func CuratedEnv(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok || name == "" {
			continue
		}
		if !keptVars[name] && !strings.HasPrefix(name, "LC_") {
			continue
		}
		if credentialShaped().MatchString(name) {
			continue
		}
		out = append(out, kv)
	}
	return out
}
