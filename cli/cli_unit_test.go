package cli

import (
	"strings"
	"testing"

	"sandtop/config"
)

func TestParseEnvFlagsRejectsWhatTheSeamWould(t *testing.T) {
	for _, bad := range []string{"=x", "A\x00B=1", "A=1\x00", "NOEQUALS", "A=B=C\x00"} {
		if _, err := parseEnvFlags([]string{bad}); err == nil {
			t.Errorf("--env %q accepted", bad)
		} else if strings.Contains(err.Error(), "\x00") || strings.Contains(err.Error(), "\n") {
			t.Errorf("--env %q: error is not one printable line: %q", bad, err)
		}
	}
	got, err := parseEnvFlags([]string{"A=1", "B=x=y", "C="})
	if err != nil || len(got) != 3 || got[1].Value != "x=y" || got[2].Value != "" {
		t.Fatalf("good entries: %+v, %v", got, err)
	}
}

func TestParseDetachKey(t *testing.T) {
	for name, want := range map[string]byte{"ctrl+]": 0x1d, "ctrl+g": 0x07, "CTRL+\\": 0x1c, "ctrl+_": 0x1f} {
		if got, err := parseDetachKey(name); err != nil || got != want {
			t.Errorf("parseDetachKey(%q) = %#x, %v; want %#x", name, got, err, want)
		}
	}
	for _, bad := range []string{"ctrl+c", "ctrl+m", "ctrl+[", "q", "ctrl+f1", ""} {
		if _, err := parseDetachKey(bad); err == nil {
			t.Errorf("parseDetachKey(%q) accepted", bad)
		}
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]int{"TERM": 15, "sigkill": 9, "SIGINT": 2, "10": 10, "64": 64} {
		if got, err := parseSignal(in); err != nil || int(got) != want {
			t.Errorf("parseSignal(%q) = %d, %v", in, got, err)
		}
	}
	for _, bad := range []string{"0", "65", "-1", "TERMINATE", ""} {
		if _, err := parseSignal(bad); err == nil {
			t.Errorf("parseSignal(%q) accepted", bad)
		}
	}
}

func TestTargetPrecedence(t *testing.T) {
	cfg, err := config.Parse("c.toml", []byte("target = \"box\"\nread_only = true\n[targets.box]\nenvd = \"http://box:49983\"\ntoken_file = \"/t\"\n[targets.sock]\nsocket = \"/s.sock\"\nread_only = false\n"))
	if err != nil {
		t.Fatal(err)
	}
	sel, err := (&targetFlags{}).resolve(cfg)
	if err != nil || sel.cfg.EnvdURL != "http://box:49983" || sel.cfg.TokenFile != "/t" || !sel.readOnly {
		t.Fatalf("config target: %+v %v", sel, err)
	}
	sel, err = (&targetFlags{names: []string{"sock"}}).resolve(cfg)
	if err != nil || sel.cfg.Local != "unix:/s.sock" || sel.readOnly {
		t.Fatalf("--target: %+v %v", sel, err)
	}
	sel, err = (&targetFlags{names: []string{"local"}}).resolve(cfg)
	if err != nil || !sel.startLocal {
		t.Fatalf("--target local: %+v %v", sel, err)
	}
	sel, err = (&targetFlags{envds: []string{"http://other:1"}, tokenFile: "/tok"}).resolve(cfg)
	if err != nil || sel.cfg.EnvdURL != "http://other:1" || sel.cfg.TokenFile != "/tok" {
		t.Fatalf("--envd: %+v %v", sel, err)
	}
	if _, err := (&targetFlags{tokenFile: "/tok", names: []string{"local"}}).resolve(cfg); err == nil {
		t.Fatal("--token-file with the local sandbox must be refused")
	}
}
