// Package config loads sandtop's TOML configuration. Precedence is fixed:
// command-line flags override the file, the file overrides Defaults. A
// missing file is not an error; a malformed one or an unknown key is,
// named with its file and key so a typo cannot silently do nothing.
package config

import "time"

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
}

// Target is one remote (or non-default local) sandbox daemon.
type Target struct {
	// Socket is the unix socket of a sandtop daemon ("serve --listen
	// unix:PATH"). Exactly one of Socket and Envd is set.
	Socket string `toml:"socket"`
	// Envd is the URL of an envd-compatible endpoint, e.g.
	// http://10.0.0.5:49983.
	Envd string `toml:"envd"`
	// TokenFile holds the access token; relative paths are taken from the
	// config file's directory, "~/" from $HOME.
	TokenFile string `toml:"token_file"`
	// User picks the unix user processes run as, where the daemon allows.
	User string `toml:"user"`
	// ReadOnly, when set, overrides the top-level read_only for this
	// target.
	ReadOnly *bool `toml:"read_only"`
}

// Confirm lists the actions that ask before they act.
type Confirm struct {
	Signal       bool `toml:"signal"`
	Teardown     bool `toml:"teardown"`
	BulkTeardown bool `toml:"bulk_teardown"`
}

// Defaults is the configuration with no file and no flags.
func Defaults() Config {
	return Config{
		Target:          LocalTarget,
		Theme:           "dark",
		ScrollbackBytes: 1 << 20,
		Grace:           5 * time.Second,
		Confirm:         Confirm{Signal: true, Teardown: true, BulkTeardown: true},
	}
}
