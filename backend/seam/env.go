package seam

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// EnvEntry is one explicit environment entry of a spawn: it sets Name to
// Value, or, with Unset, removes Name from the sandbox's base environment
// (the seam's `undefined` tombstone). Explicit entries are the caller's
// deliberate choice: a credential-shaped name or a DSH_* fact survives.
type EnvEntry struct {
	Name  string
	Value string
	Unset bool
}

// SetEnv is an entry that sets name to value.
func SetEnv(name, value string) EnvEntry { return EnvEntry{Name: name, Value: value} }

// UnsetEnv is a tombstone that removes name.
func UnsetEnv(name string) EnvEntry { return EnvEntry{Name: name, Unset: true} }

// sensitiveWords are the seam's credential heuristic: a name holding one,
// in any case, is sensitive.
var sensitiveWords = [...]string{"KEY", "PASSWORD", "SECRET", "TOKEN"}

// sensitiveName is the heuristic with Unicode case folding (a Kelvin sign
// is a K), for the rare non-ASCII name; it is compiled on first use.
var sensitiveName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)KEY|PASSWORD|SECRET|TOKEN`)
})

// isSensitive applies the heuristic. An ASCII name, nearly every one, is
// matched by hand: the regexp allocated some 36 KiB on every spawn.
func isSensitive(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return sensitiveName().MatchString(name)
		}
	}
	for _, w := range sensitiveWords {
		if containsUpperASCII(name, w) {
			return true
		}
	}
	return false
}

// containsUpperASCII reports whether s holds word, an upper-case ASCII
// word, in any case.
func containsUpperASCII(s, word string) bool {
	for i := 0; i+len(word) <= len(s); i++ {
		j := 0
		for j < len(word) && s[i+j]&^0x20 == word[j] {
			j++
		}
		if j == len(word) {
			return true
		}
	}
	return false
}

// dshPrefix marks harness-managed facts; the sandbox check is
// case-sensitive, as in dsh-subprocess-e2b.
const dshPrefix = "DSH_"

// ScrubbedName reports whether the ambient scrub drops name.
func ScrubbedName(name string) bool {
	return strings.HasPrefix(name, dshPrefix) || isSensitive(name)
}

// ValidateEnv checks explicit entries before anything starts: a name must
// be non-empty and free of '=' and NUL, a value free of NUL.
func ValidateEnv(entries []EnvEntry) error {
	for _, e := range entries {
		switch {
		case e.Name == "":
			return errors.New("environment entries require non-empty names (got an empty name)")
		case strings.ContainsAny(e.Name, "=\x00"):
			return fmt.Errorf("environment entry name %q must not contain = or NUL", e.Name)
		case !e.Unset && strings.IndexByte(e.Value, 0) >= 0:
			return fmt.Errorf("environment entry %s has a value containing NUL", e.Name)
		}
	}
	return nil
}

// ChildEnv applies the environment boundary: base ("NAME=VALUE" entries
// from the sandbox) minus DSH_* and credential-shaped names, then explicit
// entries in order (set or delete). The result keeps base order, with new
// names appended in the order they were given.
func ChildEnv(base []string, explicit []EnvEntry) ([]string, error) {
	if err := ValidateEnv(explicit); err != nil {
		return nil, err
	}
	var names []string
	values := map[string]string{}
	for _, kv := range base {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || name == "" || ScrubbedName(name) {
			continue
		}
		if _, dup := values[name]; !dup {
			names = append(names, name)
		}
		values[name] = value
	}
	for _, e := range explicit {
		if e.Unset {
			delete(values, e.Name)
			continue
		}
		if _, seen := values[e.Name]; !seen {
			names = append(names, e.Name)
		}
		values[e.Name] = e.Value
	}
	out := make([]string, 0, len(values))
	emitted := map[string]bool{}
	for _, n := range names {
		v, ok := values[n]
		if !ok || emitted[n] {
			continue
		}
		emitted[n] = true
		out = append(out, n+"="+v)
	}
	return out, nil
}

// envLookup returns the value of name in "NAME=VALUE" entries.
func envLookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if n, v, ok := strings.Cut(env[i], "="); ok && n == name {
			return v, true
		}
	}
	return "", false
}
