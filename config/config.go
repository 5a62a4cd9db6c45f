// Package config loads sandtop's TOML configuration. Precedence is fixed:
// command-line flags override the file, the file overrides Defaults. A
// missing file is not an error; a malformed one or an unknown key is,
// named with its file and key so a typo cannot silently do nothing.
package config

import (
	"time"

	"sandtop/stuck"
)

// LocalTarget names the embedded local sandbox; it needs no entry in
// [targets].
const LocalTarget = "local"

// Config is the whole file.
type Config struct {
	// Target is the sandbox plain "sandtop" opens: "local" or a key of
	// Targets.
	Target string `toml:"target"`
	// Theme is one of the embedded themes (dark, light, high-contrast) or
	// a user theme, $XDG_CONFIG_HOME/sandtop/themes/NAME.toml.
	Theme string `toml:"theme"`
	// Mouse captures the mouse in the TUI (wheel scrolling, clicks).
	Mouse bool `toml:"mouse"`
	// ReadOnly blocks every mutation: signals, teardowns, spawns, input.
	ReadOnly bool `toml:"read_only"`
	// ScrollbackBytes is the raw output kept per terminal or group pane.
	ScrollbackBytes int `toml:"scrollback_bytes"`
	// Grace is the default SIGTERM-to-SIGKILL wait of a teardown.
	Grace time.Duration `toml:"grace"`
	// Targets are named sandboxes besides the local one.
	Targets map[string]Target `toml:"targets"`
	// Keys overrides key bindings: action name -> keys, e.g.
	// detach = ["ctrl+g"].
	Keys map[string][]string `toml:"keys"`
	// Confirm says which actions ask first.
	Confirm Confirm `toml:"confirm"`
	// Stuck are the thresholds that flag a group as stuck (package stuck).
	Stuck Stuck `toml:"stuck"`
}

// Stuck is the [stuck] table: after = "10m", idle_cpu = 1.0,
// spin_cpu = 95.0, off = false.
type Stuck struct {
	After   time.Duration `toml:"after"`
	IdleCPU float64       `toml:"idle_cpu"`
	SpinCPU float64       `toml:"spin_cpu"`
	Off     bool          `toml:"off"`
}

// Rules are the table as package stuck takes them.
func (s Stuck) Rules() stuck.Rules {
	return stuck.Rules{After: s.After, IdleCPU: s.IdleCPU, SpinCPU: s.SpinCPU, Off: s.Off}
}

// Target is one remote (or non-default local) sandbox daemon.
type Target struct {
	// Socket is the unix socket of a sandtop daemon ("serve --listen
	// unix:PATH"). Exactly one of Socket, Envd and E2B (or E2BMetadata)
	// is set.
	Socket string `toml:"socket"`
	// Envd is the URL of an envd-compatible endpoint, e.g.
	// http://10.0.0.5:49983.
	Envd string `toml:"envd"`
	// TokenFile holds the access token; relative paths are taken from the
	// config file's directory, "~/" from $HOME.
	TokenFile string `toml:"token_file"`
	// CAFile is the CA certificate (PEM) of a daemon that serves its own
	// TLS (serve --tls-cert), for an https envd or kube's direct dial.
	CAFile string `toml:"ca_file"`
	// User picks the unix user processes run as, where the daemon allows.
	User string `toml:"user"`
	// ReadOnly, when set, overrides the top-level read_only for this
	// target.
	ReadOnly *bool `toml:"read_only"`

	// RuntimeRoot is where sandtop keeps its state in the sandbox when
	// the daemon there is a stock envd; AgentWorkspace is the agent's
	// working directory (where its .dsh-e2b state is read, and where :run
	// starts). Both must be absolute. On E2B they default to
	// ~/.local/state/sandtop and the user's home, never the agent's
	// workspace for sandtop's own state.
	RuntimeRoot    string `toml:"runtime_root"`
	AgentWorkspace string `toml:"agent_workspace"`

	// E2B names one E2B sandbox by id; E2BMetadata instead selects every
	// sandbox (running or paused) whose metadata has all these pairs.
	E2B         string            `toml:"e2b"`
	E2BMetadata map[string]string `toml:"e2b_metadata"`
	// E2BAPIKeyFile holds this target's E2B API key (else E2B_API_KEY);
	// E2BDomain and E2BAPIURL replace E2B_DOMAIN and E2B_API_URL, for an
	// E2B-compatible provider or another region.
	E2BAPIKeyFile string `toml:"e2b_api_key_file"`
	E2BDomain     string `toml:"e2b_domain"`
	E2BAPIURL     string `toml:"e2b_api_url"`

	// Kube selects Kubernetes pods that run sandtop's daemon, found
	// through the API server: kube = { context = "...", namespace =
	// "...", selector = "app=agent" }.
	Kube *Kube `toml:"kube"`
}

// Kube is a target's kube table. Empty fields mean what kubectl means.
type Kube struct {
	// Kubeconfig is a kubeconfig file (default $KUBECONFIG, then
	// ~/.kube/config, then in-cluster); relative to the config file.
	Kubeconfig string `toml:"kubeconfig"`
	// Context is the kubeconfig context (default: its current one).
	Context string `toml:"context"`
	// Namespace is where pods are listed (default: the context's);
	// AllNamespaces lists every namespace.
	Namespace     string `toml:"namespace"`
	AllNamespaces bool   `toml:"all_namespaces"`
	// Selector is a label selector, e.g. "app=agent".
	Selector string `toml:"selector"`
	// TokenSecret names the Secret (in each pod's namespace, key
	// "token") holding the daemons' token; token_file wins over it.
	TokenSecret string `toml:"token_secret"`
	// Direct dials pod IPs instead of the API server's pod proxy (for a
	// sandtop running inside the cluster).
	Direct bool `toml:"direct"`
}

// IsE2B says whether the target is found through E2B's control plane.
func (t Target) IsE2B() bool { return t.E2B != "" || len(t.E2BMetadata) > 0 }

// Confirm lists the actions that ask before they act.
type Confirm struct {
	Signal       bool `toml:"signal"`
	Teardown     bool `toml:"teardown"`
	BulkTeardown bool `toml:"bulk_teardown"`
}

// DefaultGrace is how long a teardown waits after SIGTERM before SIGKILL
// when neither the config nor a flag says.
const DefaultGrace = 5 * time.Second

// Defaults is the configuration with no file and no flags.
func Defaults() Config {
	return Config{
		Target:          LocalTarget,
		Theme:           "dark",
		ScrollbackBytes: 1 << 20,
		Grace:           DefaultGrace,
		Confirm:         Confirm{Signal: true, Teardown: true, BulkTeardown: true},
		Stuck:           Stuck{After: stuck.DefaultAfter, IdleCPU: stuck.DefaultIdleCPU, SpinCPU: stuck.DefaultSpinCPU},
	}
}
