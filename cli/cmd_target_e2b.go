package cli

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"sandtop/backend/e2b"
	"sandtop/backend/target"
	"sandtop/config"
)

// e2bAll is what a bare --e2b means: every sandbox of the team.
const e2bAll = "all"

// e2bExtension adds --e2b and --e2b-metadata: E2B sandboxes found through
// E2B's control plane with E2B_API_KEY (E2B_API_URL, E2B_DOMAIN and
// E2B_SANDBOX_URL as E2B's SDKs read them). Finding and watching them
// never resumes or extends them.
type e2bExtension struct {
	value    e2bValue
	metadata []string
}

func init() {
	targetExtensions = append(targetExtensions, func() targetExtension { return &e2bExtension{} })
}

func (x *e2bExtension) register(fs *pflag.FlagSet) {
	fs.Var(&x.value, "e2b", "E2B sandboxes (needs E2B_API_KEY): --e2b for every one (running or paused), --e2b=ID for one")
	fs.Lookup("e2b").NoOptDefVal = e2bAll
	stringArrayVarP(fs, &x.metadata, "e2b-metadata", "", "only the E2B sandboxes whose metadata has KEY=VALUE (repeatable; implies --e2b)")
}

// e2bValue is --e2b's value; it remembers being set itself, to tell
// "--e2b=" from no flag at all without holding on to a *pflag.Flag (one
// such pointer, shared by every command, once made --e2b a no-op on all
// but the last command registered).
type e2bValue struct {
	v   string
	set bool
}

func (e *e2bValue) String() string { return e.v }
func (e *e2bValue) Type() string   { return "string" }
func (e *e2bValue) Set(s string) error {
	e.v, e.set = s, true
	return nil
}

func (x *e2bExtension) apply(c *target.Config) (bool, error) {
	md, err := parseMetadata(x.metadata)
	if err != nil {
		return false, err
	}
	given := x.value.set
	if !given && md == nil {
		return false, nil
	}
	v := strings.TrimSpace(x.value.v)
	switch {
	case !given:
		c.E2B = true
	case v == "":
		return false, errors.New("--e2b= needs a sandbox id (or give --e2b alone for all)")
	case v == e2bAll:
		c.E2B = true
	case md != nil:
		return false, errors.New("--e2b-metadata filters the team's sandboxes; it does not go with --e2b=ID")
	default:
		c.E2BSandboxID = v
	}
	c.E2BMetadata = md
	return true, nil
}

// parseMetadata reads KEY=VALUE pairs; none gives nil.
func parseMetadata(pairs []string) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	md := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("--e2b-metadata %q: want KEY=VALUE", p)
		}
		md[strings.TrimSpace(k)] = v
	}
	return md, nil
}

// e2bTargetConfig turns a [targets.NAME] table with e2b or e2b_metadata
// into the target config: its own domain and API URL, the environment for
// the rest. Its key file is read when the target is resolved (readAPIKey),
// so an unreadable one fails that target only.
func e2bTargetConfig(ct config.Target) target.Config {
	return target.Config{
		E2BSandboxID: ct.E2B, E2BMetadata: ct.E2BMetadata, E2B: ct.E2B == "",
		User: ct.User, RuntimeRoot: ct.RuntimeRoot, AgentWorkspace: ct.AgentWorkspace,
		E2BConfig: e2b.Config{Domain: ct.E2BDomain, APIURL: ct.E2BAPIURL},
	}
}

// readAPIKey reads an e2b_api_key_file: one non-empty line.
func readAPIKey(file string) (string, error) {
	// A FIFO or /dev/zero here must not hang or fill memory (as config).
	b, err := config.ReadSmallFile(file)
	if err != nil {
		return "", fmt.Errorf("e2b_api_key_file: %w", err)
	}
	key := strings.TrimSpace(string(b))
	if key == "" || strings.ContainsAny(key, "\r\n") {
		return "", fmt.Errorf("e2b_api_key_file %s must hold the key on one line", file)
	}
	return key, nil
}

// warnOnce prints each distinct warning once per run, on stderr (it stays
// readable after the TUI leaves the alternate screen); the TUI also shows
// the ones given so far in its event log (warningsSoFar).
var warnOnce, warningsSoFar = func() (func(string), func() []string) {
	var mu sync.Mutex
	var given []string
	warn := func(msg string) {
		mu.Lock()
		defer mu.Unlock()
		if !slices.Contains(given, msg) {
			given = append(given, msg)
			fmt.Fprintln(os.Stderr, "sandtop: warning: "+msg)
		}
	}
	soFar := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(given)
	}
	return warn, soFar
}()
