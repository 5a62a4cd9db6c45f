package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// EnvConfig points sandtop at a config file, overriding the XDG location.
const EnvConfig = "SANDTOP_CONFIG"

// Path is where sandtop looks for its config file: $SANDTOP_CONFIG, else
// $XDG_CONFIG_HOME/sandtop/config.toml, else ~/.config/sandtop/config.toml.
func Path(getenv func(string) string) (string, error) {
	if p := getenv(EnvConfig); p != "" {
		return filepath.Abs(p)
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "sandtop", "config.toml"), nil
	}
	home := getenv("HOME")
	if home == "" {
		return "", errors.New("cannot place the config file: neither $SANDTOP_CONFIG, $XDG_CONFIG_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".config", "sandtop", "config.toml"), nil
}

// Load reads path over Defaults. A missing file gives the defaults; a
// file that is not regular, or bigger than MaxFileSize, is an error.
func Load(path string) (Config, error) {
	c := Defaults()
	data, err := ReadSmallFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, fmt.Errorf("config: %w", err)
	}
	if err := c.decode(path, data); err != nil {
		return Defaults(), err
	}
	return c, nil
}

// Parse reads a config from data over Defaults; name is used in errors and
// to resolve relative token files.
func Parse(name string, data []byte) (Config, error) {
	c := Defaults()
	if err := c.decode(name, data); err != nil {
		return Defaults(), err
	}
	return c, nil
}

func (c *Config) decode(path string, data []byte) error {
	md, err := toml.Decode(string(data), c)
	if err != nil {
		var perr toml.ParseError
		if errors.As(err, &perr) {
			if perr.LastKey != "" {
				return fmt.Errorf("config %s: line %d: %s: %s", path, perr.Position.Line, perr.LastKey, perr.Message)
			}
			return fmt.Errorf("config %s: line %d: %s", path, perr.Position.Line, perr.Message)
		}
		return fmt.Errorf("config %s: %w", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return fmt.Errorf("config %s: unknown key %s", path, strings.Join(keys, ", "))
	}
	c.resolvePaths(filepath.Dir(path))
	if err := c.Validate(); err != nil {
		return fmt.Errorf("config %s: %w", path, err)
	}
	return nil
}

// resolvePaths makes token files absolute: "~/" from $HOME, relative ones
// from the config file's directory.
func (c *Config) resolvePaths(dir string) {
	for name, t := range c.Targets {
		t.TokenFile = ExpandPath(t.TokenFile, dir)
		t.CAFile = ExpandPath(t.CAFile, dir)
		t.Socket = ExpandPath(t.Socket, dir)
		t.E2BAPIKeyFile = ExpandPath(t.E2BAPIKeyFile, dir)
		if t.Kube != nil {
			k := *t.Kube
			k.Kubeconfig = ExpandPath(k.Kubeconfig, dir)
			t.Kube = &k
		}
		c.Targets[name] = t
	}
}

// ExpandPath expands a leading "~/" and makes a relative path absolute
// against dir. Empty stays empty.
func ExpandPath(p, dir string) string {
	if p == "" {
		return ""
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	if !filepath.IsAbs(p) {
		return filepath.Join(dir, p)
	}
	return p
}
