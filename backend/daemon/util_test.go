package daemon_test

import (
	"os"
	"strconv"
	"syscall"
	"testing"
)

func touch(t testing.TB, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	st := statState(b)
	return st != "Z" && st != "X" && syscall.Kill(pid, 0) == nil
}

// exists reports whether /proc/<pid> exists at all (zombies included).
func exists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

func statState(b []byte) string {
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == ')' && i+2 < len(b) {
			return string(b[i+2])
		}
	}
	return ""
}

func pidOf(t *testing.T) int { return os.Getpid() }

func readDirNames(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}

func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// threads is the number of OS threads of this process (the daemon's, in
// these tests).
func threads(t *testing.T) int {
	t.Helper()
	return threadsOf(t, os.Getpid())
}
