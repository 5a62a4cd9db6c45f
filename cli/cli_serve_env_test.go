package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"sandtop/testwait"
)

// serve used to filter its children's environment with a deny pattern
// only, and to keep every secret in its own /proc/<pid>/environ. It now
// starts children from the local daemon's allowlist and drops the rest
// from its own environment once its configuration is read.
func TestServeKeepsSecretsFromChildrenAndItsOwnEnviron(t *testing.T) {
	t.Parallel()
	secrets := []string{
		"DATABASE_URL=postgres://u:hunter2@db/x", "GH_PAT=ghp_secret", "SENTRY_DSN=https://k@s/1",
		"MY_PASS=pw", "PGPASS=pw", "PRIVATE_PEM=-----BEGIN", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh", "E2B_API_KEY=e2b",
	}
	serve, sock := startServeOnSocket(t, append([]string{"LANG=C.UTF-8"}, secrets...))

	r := sandtopEnv(t, testEnv, "--socket", sock, "run", "--wait", "--", "env")
	if r.code != 0 || !strings.Contains(r.stdout, "LANG=C.UTF-8") {
		t.Fatalf("run env: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	own, err := os.ReadFile("/proc/" + strconv.Itoa(serve.Process.Pid) + "/environ")
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range secrets {
		name, value, _ := strings.Cut(kv, "=")
		if strings.Contains(r.stdout, name+"=") || strings.Contains(r.stdout, value) {
			t.Errorf("a child saw %s", name)
		}
		if strings.Contains(string(own), name+"=") {
			t.Errorf("/proc/<daemon>/environ still holds %s", name)
		}
	}
}

// startServeOnSocket runs "sandtop serve" on a unix socket in a private
// directory, with env beside PATH and HOME (that directory), and waits for
// its socket. It ends with the test, and with the test binary (SIGTERM,
// so it cleans up) even when go test's timeout kills it.
func startServeOnSocket(t *testing.T, env []string, args ...string) (serve *exec.Cmd, sock string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "stserve-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock = filepath.Join(dir, "s.sock")
	argv := append([]string{"serve", "--listen", "unix:" + sock, "--state-dir", filepath.Join(dir, "state"), "--kill-on-exit"}, args...)
	serve = exec.Command(sandtopBin, argv...)
	serve.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
	serve.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = serve.Process.Signal(syscall.SIGTERM); _ = serve.Wait() })
	testwait.For(t, 20*time.Second, "the daemon's socket", func() bool {
		_, err := os.Stat(sock)
		return err == nil
	})
	return serve, sock
}
