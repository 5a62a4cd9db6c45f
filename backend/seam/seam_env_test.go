package seam

import (
	"context"
	"errors"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func envOf(t *testing.T, h *Handle) map[string]string {
	t.Helper()
	settle(t, h)
	m := map[string]string{}
	for _, kv := range strings.Split(h.Collected.Stdout.ReadFrom(0).Text, "\x00") {
		if n, v, ok := strings.Cut(kv, "="); ok {
			m[n] = v
		}
	}
	return m
}

func TestEnvironmentBoundary(t *testing.T) {
	t.Setenv("SANDTOP_HOST_ONLY", "from-the-test-process")
	forBothPlanes(t, func(t *testing.T, s *seam) {
		explicit := []EnvEntry{SetEnv("API_KEY", "explicit-key"), SetEnv("DSH_MODE", "on"), UnsetEnv("KEEP"),
			SetEnv("with-hyphen", "h"), SetEnv("SPLIT", "--split-string"), SetEnv("LANG", "C")}
		h := s.spawn(collectBoth(1<<20), time.Second, explicit, "/usr/bin/env", "-0")
		env := envOf(t, h)
		if _, ok := env["SANDTOP_HOST_ONLY"]; ok {
			t.Error("a host-only variable reached the sandbox child")
		}
		for _, gone := range []string{"NPM_TOKEN", "DSH_STALE", "my_password", "KEEP"} {
			if v, ok := env[gone]; ok {
				t.Errorf("%s=%q survived the scrub", gone, v)
			}
		}
		want := map[string]string{"API_KEY": "explicit-key", "DSH_MODE": "on", "dsh_lower": "kept",
			"with-hyphen": "h", "SPLIT": "--split-string", "LANG": "C", "PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"}
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s=%q, want %q", k, env[k], v)
			}
		}
		if home := env["HOME"]; !strings.HasPrefix(home, "/") {
			t.Errorf("HOME %q is not the login home", home)
		}
	})
}

func TestEnvironmentRejectsBadEntriesBeforeAnyStart(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		for _, e := range []EnvEntry{SetEnv("", "x"), SetEnv("BAD=NAME", "x"), SetEnv("NUL\x00", "x"), SetEnv("OK", "nul\x00value")} {
			_, err := s.rt.Spawn(s.ctx(), SpawnSpec{Argv: []string{"/bin/true"}, Cwd: "/", Stdio: collectBoth(10), Grace: 100 * time.Millisecond, Env: []EnvEntry{e}})
			if err == nil {
				t.Fatalf("entry %q accepted", e.Name)
			}
		}
		if n := s.wire.count("Start:wrapper", "Start:probe", "Start:other"); n != 0 {
			t.Fatalf("the daemon saw %d Start calls for rejected specs", n)
		}
	})
}

func TestEnvironmentFileIsGoneOnceTheChildRuns(t *testing.T) {
	forBothPlanes(t, func(t *testing.T, s *seam) {
		stdio := Stdio{Stdin: StdinPipe(), Stdout: OutputPipe(), Stderr: OutputCollect(4096)}
		h := s.spawn(stdio, time.Second, []EnvEntry{SetEnv("SECRET_TOKEN", "s3cret")}, "/bin/sh", "-c", `read dir; ls -A "$dir"`)
		if _, err := io.WriteString(h.Stdin, h.StateDir()+"\n"); err != nil {
			t.Fatal(err)
		}
		_ = h.Stdin.Close()
		out, err := io.ReadAll(h.Stdout)
		if err != nil {
			t.Fatal(err)
		}
		wantExit(t, settle(t, h), 0)
		files := strings.Fields(string(out))
		for _, f := range files {
			if f == "environment" {
				t.Fatalf("environment file still present while the child runs: %q", files)
			}
		}
		if len(files) == 0 {
			t.Fatal("child listed no state files")
		}
		// The wrapper's own environ never holds the scrubbed ambient secret.
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(h.StartPid()) + "/environ"); err == nil && strings.Contains(string(b), "npm-secret") {
			t.Error("wrapper environ holds NPM_TOKEN's value")
		} else if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Log(err)
		}
	})
}

func TestChildEnvUnit(t *testing.T) {
	base := []string{"PATH=/bin", "NPM_TOKEN=x", "DSH_X=1", "dsh_y=2", "Secret_thing=3", "A=1", "BROKEN", "=weird"}
	got, err := ChildEnv(base, []EnvEntry{UnsetEnv("A"), SetEnv("B", "2"), SetEnv("NPM_TOKEN", "explicit")})
	if err != nil {
		t.Fatal(err)
	}
	want := "PATH=/bin dsh_y=2 B=2 NPM_TOKEN=explicit"
	if strings.Join(got, " ") != want {
		t.Fatalf("ChildEnv = %q, want %q", got, want)
	}
	p, err := parseProbe([]byte("/home/u\x00HOME=/root\x00X=1\x00noequals\x00=bad\x00\x00"))
	if err != nil || strings.Join(p, " ") != "X=1 HOME=/home/u" {
		t.Fatalf("parseProbe = %q, %v", p, err)
	}
	for _, bad := range []string{"", "relative\x00X=1", "\x00X=1"} {
		if _, err := parseProbe([]byte(bad)); err == nil || err.Error() != "remote login home is invalid" {
			t.Errorf("parseProbe(%q) err = %v", bad, err)
		}
	}
}

// sandtop's daemon says in Hello what a command's environment is, so the
// seam skips its probe there; it must be exactly what the probe reads.
func TestHelloEnvironmentIsWhatTheProbeReads(t *testing.T) {
	s := newSeam(t, false, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	told := slices.Clone(s.rt.baseEnv)
	if len(told) == 0 {
		t.Fatal("the daemon's Hello carried no environment")
	}
	probed, err := probeEnvironment(ctx, s.rt.runner)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(told)
	slices.Sort(probed)
	if !slices.Equal(told, probed) {
		t.Fatalf("Hello says %q\nthe probe reads %q", told, probed)
	}
}
