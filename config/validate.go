package config

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// Bounds of scrollback_bytes: enough for a screenful, small enough that a
// few dozen panes cannot exhaust memory.
const (
	MinScrollbackBytes = 4 << 10
	MaxScrollbackBytes = 256 << 20
)

// Validate checks values the TOML types cannot.
func (c Config) Validate() error {
	if c.ScrollbackBytes < MinScrollbackBytes || c.ScrollbackBytes > MaxScrollbackBytes {
		return fmt.Errorf("scrollback_bytes = %d is outside %d..%d", c.ScrollbackBytes, MinScrollbackBytes, MaxScrollbackBytes)
	}
	if c.Grace < 0 {
		return fmt.Errorf("grace = %s must not be negative", c.Grace)
	}
	if err := c.Stuck.Rules().Check(); err != nil {
		return fmt.Errorf("[stuck]: %w", err)
	}
	for _, name := range c.TargetNames() {
		if err := c.Targets[name].validate(); err != nil {
			return fmt.Errorf("[targets.%s]: %w", name, err)
		}
	}
	if _, ok := c.Targets[LocalTarget]; ok {
		return fmt.Errorf("[targets.%s]: %q is the built-in local sandbox and cannot be redefined", LocalTarget, LocalTarget)
	}
	if c.Target != LocalTarget {
		if _, ok := c.Targets[c.Target]; !ok {
			return fmt.Errorf("target = %q names no [targets.%s] table (have: %s)", c.Target, c.Target, strings.Join(append([]string{LocalTarget}, c.TargetNames()...), ", "))
		}
	}
	for action, keys := range c.Keys {
		if len(keys) == 0 {
			return fmt.Errorf("[keys] %s needs at least one key", action)
		}
	}
	return nil
}

func (t Target) validate() error {
	n := 0
	for _, set := range []bool{t.Socket != "", t.Envd != "", t.IsE2B(), t.Kube != nil} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		return fmt.Errorf("set either socket, envd, e2b (or e2b_metadata) or kube")
	case n > 1:
		return fmt.Errorf("set only one of socket, envd, e2b and kube")
	case t.Kube != nil && t.Kube.AllNamespaces && t.Kube.Namespace != "":
		return fmt.Errorf("kube: namespace names one namespace and all_namespaces every one; set only one")
	case t.Kube != nil && t.User != "":
		return fmt.Errorf("user does not go with kube: through the pod proxy the daemon runs processes as its own user")
	case t.E2B != "" && len(t.E2BMetadata) > 0:
		return fmt.Errorf("e2b names one sandbox and e2b_metadata selects several; set only one")
	case t.Envd != "":
		u, err := url.Parse(t.Envd)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("envd = %q is not an http:// or https:// URL with a host", t.Envd)
		}
	case strings.ContainsAny(t.E2B, "/?#% \t\r\n"):
		return fmt.Errorf("e2b = %q is not a sandbox id", t.E2B)
	}
	if !t.IsE2B() && (t.E2BAPIKeyFile != "" || t.E2BDomain != "" || t.E2BAPIURL != "") {
		return fmt.Errorf("e2b_api_key_file, e2b_domain and e2b_api_url go with e2b or e2b_metadata")
	}
	if t.E2BAPIURL != "" {
		if u, err := url.Parse(t.E2BAPIURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("e2b_api_url = %q is not an http:// or https:// URL with a host", t.E2BAPIURL)
		}
	}
	for _, p := range []struct{ key, val string }{{"runtime_root", t.RuntimeRoot}, {"agent_workspace", t.AgentWorkspace}} {
		if p.val != "" && !strings.HasPrefix(p.val, "/") {
			return fmt.Errorf("%s = %q must be an absolute path in the sandbox", p.key, p.val)
		}
	}
	return nil
}

// TargetNames are the configured target names, sorted.
func (c Config) TargetNames() []string {
	names := make([]string, 0, len(c.Targets))
	for n := range c.Targets {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ReadOnlyFor says whether target runs read-only: its own setting if it
// has one, else the top-level one.
func (c Config) ReadOnlyFor(target string) bool {
	if t, ok := c.Targets[target]; ok && t.ReadOnly != nil {
		return *t.ReadOnly
	}
	return c.ReadOnly
}
