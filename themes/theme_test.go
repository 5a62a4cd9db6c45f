package themes

import (
	"strings"
	"testing"
)

func TestEveryEmbeddedThemeLoads(t *testing.T) {
	names := Names()
	for _, want := range []string{"dark", "light", "high-contrast"} {
		if !contains(names, want) {
			t.Fatalf("Names() = %v, missing %q", names, want)
		}
	}
	for _, n := range names {
		th, err := Load(n)
		if err != nil {
			t.Fatalf("Load(%q): %v", n, err)
		}
		if th.Name != n {
			t.Errorf("theme file %s.toml says name %q", n, th.Name)
		}
	}
}

func TestLoadEmptyNameGivesDefault(t *testing.T) {
	th, err := Load("")
	if err != nil || th.Name != Default {
		t.Fatalf("Load(\"\") = %q, %v; want %q", th.Name, err, Default)
	}
}

func TestLoadUnknownNameListsChoices(t *testing.T) {
	_, err := Load("nope")
	if err == nil || !strings.Contains(err.Error(), "dark") {
		t.Fatalf("err = %v, want a not-found error listing themes", err)
	}
}

func TestParseRejectsBadColourAndUnknownKey(t *testing.T) {
	good, _ := files.ReadFile("dark.toml")
	bad := strings.Replace(string(good), `running      = "#98c379"`, `running      = "green"`, 1)
	if _, err := Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "ui.running") {
		t.Fatalf("bad colour: err = %v", err)
	}
	extra := string(good) + "\n[extra]\nx = 1\n"
	if _, err := Parse([]byte(extra)); err == nil || !strings.Contains(err.Error(), "unknown keys") {
		t.Fatalf("unknown key: err = %v", err)
	}
}

func TestRGB(t *testing.T) {
	r, g, b := RGB("#0a1b2c")
	if r != 0x0a || g != 0x1b || b != 0x2c {
		t.Fatalf("RGB = %x %x %x", r, g, b)
	}
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
