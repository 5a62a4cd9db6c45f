package daemon_test

import (
	"os"
	"os/user"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"

	"sandtop/backend/daemon"
	"sandtop/backend/daemontest"
	"sandtop/backend/envd"
)

// Env names with "=" or none at all used to be passed on (the child saw
// other names than asked for); they are now refused before any start.
func TestStartRefusesBadEnvNames(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	for _, name := range []string{"A=B", "", "=x", "A\x00B"} {
		req := startReq("true")
		req.Process.Envs = map[string]string{name: "x"}
		s, err := env.Client.Process.Start(ctxFor(t, 10*time.Second), connect.NewRequest(req))
		if err == nil {
			_, err = drainStart(s)
		}
		wantCode(t, err, connect.CodeInvalidArgument, "is not valid: a name must be non-empty and hold no '='")
	}
}

// A PATH in the request used to redirect the program lookup; the program
// is now found on the sandbox's PATH, and the child still gets the PATH it
// asked for.
func TestRequestPathDoesNotChangeTheProgramLookup(t *testing.T) {
	env := daemontest.Start(t, daemon.Config{})
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/env", []byte("#!/bin/sh\necho planted\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	req := startReq("env")
	req.Process.Envs = map[string]string{"PATH": dir}
	r := run(t, env.Client, req)
	if strings.Contains(r.stdout.String(), "planted") || !strings.Contains(r.stdout.String(), "PATH="+dir+"\n") {
		t.Fatalf("env printed %q", r.stdout.String())
	}
}

// --user nobody used to fail with "fork/exec /usr/bin/id: no such file or
// directory" when the real cause is nobody's missing home.
func TestMissingHomeIsNamed(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run as another user")
	}
	u, err := user.Lookup("nobody")
	if err != nil {
		t.Skip("no user nobody")
	}
	if _, err := os.Stat(u.HomeDir); err == nil {
		t.Skipf("nobody's home %s exists", u.HomeDir)
	}
	env := daemontest.Start(t, daemon.Config{})
	c := env.Dial(envd.WithUser("nobody"))
	s, err := c.Process.Start(ctxFor(t, 10*time.Second), connect.NewRequest(startReq("id")))
	if err == nil {
		_, err = drainStart(s)
	}
	wantCode(t, err, connect.CodeFailedPrecondition, `home directory "`+u.HomeDir+`" of user "nobody" does not exist`)
	// With a cwd it runs.
	req := startReq("id", "-un")
	cwd := "/"
	req.Process.Cwd = &cwd
	if r := run(t, c, req); strings.TrimSpace(r.stdout.String()) != "nobody" {
		t.Errorf("id -un printed %q", r.stdout.String())
	}
}
