package themes

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestUserThemes(t *testing.T) {
	dir := t.TempDir()
	dark, err := files.ReadFile("dark.toml")
	if err != nil {
		t.Fatal(err)
	}
	mine := strings.Replace(string(dark), `name = "dark"`, `name = "mine"`, 1)
	if err := os.WriteFile(filepath.Join(dir, "mine.toml"), []byte(mine), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.toml"), []byte(`name = "broken"`), 0o600); err != nil {
		t.Fatal(err)
	}
	if th, err := LoadFrom(dir, "mine"); err != nil || th.Name != "mine" {
		t.Fatalf("user theme: %v %v", th.Name, err)
	}
	if _, err := LoadFrom(dir, "light"); err != nil {
		t.Fatalf("embedded theme beside a user dir: %v", err)
	}
	if _, err := LoadFrom(dir, "broken"); err == nil || !strings.Contains(err.Error(), "broken.toml") {
		t.Fatalf("a broken user theme must be refused, naming its file: %v", err)
	}
	if _, err := LoadFrom(dir, "../mine"); err == nil {
		t.Fatalf("a path was taken as a theme name")
	}
	if _, err := LoadFrom(dir, "solarized"); err == nil || !strings.Contains(err.Error(), "mine") {
		t.Fatalf("unknown theme error should list the user's themes: %v", err)
	}
	if names := NamesIn(dir); !slices.Contains(names, "mine") || !slices.Contains(names, "dark") {
		t.Fatalf("names = %v", names)
	}
	if got := UserDir(func(k string) string { return map[string]string{"XDG_CONFIG_HOME": "/x"}[k] }); got != "/x/sandtop/themes" {
		t.Fatalf("UserDir = %q", got)
	}
}
