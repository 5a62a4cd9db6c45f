package cli

import (
	"slices"
	"strings"
	"testing"

	"sandtop/config"

	"sandtop/wrapper"
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

func TestWrapperArgvFindsTheRequestedCommand(t *testing.T) {
	params := []string{"/bin/bash", "--noprofile", "--norc", "-c", "SCRIPT", "sandtop-wrapper", "/state", "ignore", "1", "1", "0022",
		"/usr/bin/env", "/usr/bin/tee", "/usr/bin/head", "/usr/bin/rm"}
	requested := []string{"--", "bash", "-c", "sleep 1 | sleep 2"}
	for name, leader := range map[string][]string{
		"current": slices.Concat(params, []string{"/usr/bin/stdbuf"}, requested),
		"older":   slices.Concat(params, requested),
	} {
		t.Run(name, func(t *testing.T) { checkWrapperMembers(t, leader) })
	}
	if _, _, ok := wrapper.Inner(params); ok {
		t.Fatal("a wrapper argv without \"--\" was accepted")
	}
}

func checkWrapperMembers(t *testing.T, leader []string) {
	members := []listProcess{
		{PID: 10, PPID: 1, Argv: leader},
		{PID: 11, PPID: 10, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{PID: 12, PPID: 11, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 13, PPID: 10, Argv: []string{"bash", "-c", "sleep 1 | sleep 2"}},
		{PID: 14, PPID: 13, Argv: []string{"sleep", "1"}},
		{PID: 15, PPID: 99, Argv: []string{"/usr/bin/tee", "orphan-of-the-program"}},
	}
	cmd := markWrapperMembers(10, members)
	if strings.Join(cmd, " ") != "bash -c sleep 1 | sleep 2" {
		t.Fatalf("command %q", cmd)
	}
	want := map[int]bool{10: true, 11: true, 12: true}
	for _, m := range members {
		if m.Wrapper != want[m.PID] {
			t.Errorf("pid %d wrapper=%v, want %v", m.PID, m.Wrapper, want[m.PID])
		}
	}

	// Once the leader has exited, its fork, tee and head are orphans of the
	// daemon; they used to be counted as the program's.
	gone := []listProcess{
		{PID: 20, PPID: 1, Argv: leader}, // a fork of the leader
		{PID: 21, PPID: 20, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/dev/fd/63"}},
		{PID: 22, PPID: 21, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 23, PPID: 1, Argv: []string{"/usr/bin/tee", "--output-error=warn-nopipe", "/x"}},
		{PID: 24, PPID: 23, Argv: []string{"/usr/bin/head", "-c", "1"}},
		{PID: 25, PPID: 1, Argv: []string{"sleep", "1"}},
		{PID: 26, PPID: 25, Argv: []string{"sleep", "2"}},
	}
	markWrapperMembers(10, gone)
	for _, m := range gone {
		if m.Wrapper != (m.PID < 25) {
			t.Errorf("leader gone: pid %d %v wrapper=%v", m.PID, m.Argv, m.Wrapper)
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
