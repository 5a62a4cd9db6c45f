// Package themes holds sandtop's colour themes: TOML files embedded in the
// binary, and the loader that turns one into a Theme. A theme carries the 16
// ANSI colours plus the default foreground and background, so the terminal
// pane and the PNG renderer paint remote programs in the same colours as the
// rest of the UI.
package themes

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/BurntSushi/toml"

	"sandtop/config"
)

//go:embed *.toml
var files embed.FS

// Default is the theme used when none is named.
const Default = "dark"

// Palette is the terminal palette: what a remote program's SGR colours map
// to. Colours are "#rrggbb".
type Palette struct {
	Foreground string     `toml:"foreground"`
	Background string     `toml:"background"`
	Cursor     string     `toml:"cursor"`
	ANSI       [16]string `toml:"ansi"`
}

// UI holds the colours of sandtop's own chrome.
type UI struct {
	Text        string `toml:"text"`
	Muted       string `toml:"muted"`
	Accent      string `toml:"accent"`
	Border      string `toml:"border"`
	BorderFocus string `toml:"border_focus"`
	SelectionBg string `toml:"selection_bg"`
	SelectionFg string `toml:"selection_fg"`
	HeaderBg    string `toml:"header_bg"`
	HeaderFg    string `toml:"header_fg"`
	Running     string `toml:"running"`
	Stopped     string `toml:"stopped"`
	Exited      string `toml:"exited"`
	Settled     string `toml:"settled"`
	Warning     string `toml:"warning"`
	Danger      string `toml:"danger"`
	OK          string `toml:"ok"`
	Managed     string `toml:"managed"`
	Agent       string `toml:"agent"`
	Foreign     string `toml:"foreign"`
	Match       string `toml:"match"`
}

// Theme is one loaded theme.
type Theme struct {
	Name    string  `toml:"name"`
	Dark    bool    `toml:"dark"`
	Palette Palette `toml:"palette"`
	UI      UI      `toml:"ui"`
}

// Names lists the embedded themes, sorted.
func Names() []string {
	entries, _ := files.ReadDir(".")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".toml"))
	}
	sort.Strings(names)
	return names
}

// Load returns the embedded theme with this name ("" means Default).
func Load(name string) (Theme, error) { return LoadFrom("", name) }

// UserDir is where the operator's own themes live:
// $XDG_CONFIG_HOME/sandtop/themes, else ~/.config/sandtop/themes; "" when
// neither variable is set.
func UserDir(getenv func(string) string) string {
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "sandtop", "themes")
	}
	if h := getenv("HOME"); h != "" {
		return filepath.Join(h, ".config", "sandtop", "themes")
	}
	return ""
}

// LoadFrom returns the theme with this name: dir/NAME.toml when dir holds
// one (a user theme, which may replace an embedded one), else the embedded
// theme.
func LoadFrom(dir, name string) (Theme, error) {
	if name == "" {
		name = Default
	}
	if strings.ContainsAny(name, `/\`) || name == "." || name == ".." {
		return Theme{}, fmt.Errorf("theme %q: a name, not a path", name)
	}
	if dir != "" {
		p := filepath.Join(dir, name+".toml")
		data, err := config.ReadSmallFile(p)
		if err == nil {
			t, err := Parse(data)
			if err != nil {
				return Theme{}, fmt.Errorf("%s: %w", p, err)
			}
			return t, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return Theme{}, err
		}
	}
	data, err := files.ReadFile(path.Clean(name) + ".toml")
	if err != nil {
		return Theme{}, fmt.Errorf("theme %q not found (have %s)", name, strings.Join(NamesIn(dir), ", "))
	}
	return Parse(data)
}

// NamesIn lists the embedded themes and those in dir, sorted, once each.
func NamesIn(dir string) []string {
	names := Names()
	if dir != "" {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if n, ok := strings.CutSuffix(e.Name(), ".toml"); ok && !slices.Contains(names, n) {
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// MustLoad is Load for names known to be embedded.
func MustLoad(name string) Theme {
	t, err := Load(name)
	if err != nil {
		panic(err)
	}
	return t
}

// Parse decodes a theme from TOML and checks that every colour is set and
// well formed, so a typo fails at load time rather than painting black.
func Parse(data []byte) (Theme, error) {
	var t Theme
	md, err := toml.Decode(string(data), &t)
	if err != nil {
		return Theme{}, fmt.Errorf("theme: %w", err)
	}
	if un := md.Undecoded(); len(un) > 0 {
		return Theme{}, fmt.Errorf("theme %q: unknown keys %v", t.Name, un)
	}
	if err := t.validate(); err != nil {
		return Theme{}, fmt.Errorf("theme %q: %w", t.Name, err)
	}
	return t, nil
}
