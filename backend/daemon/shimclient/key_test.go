package shimclient_test

import (
	"os"
	"path/filepath"
	"testing"

	"sandtop/backend/daemon/shimclient"
)

type warnings []string

func (w *warnings) Warn(msg string, _ ...any) { *w = append(*w, msg) }

// The runtime root's key is made once, private, and read back by every
// later daemon; one that is not a key is not used, nor overwritten.
func TestLoadKeyIsTheRootsOwn(t *testing.T) {
	root := t.TempDir()
	var w warnings
	key := shimclient.LoadKey(root, &w)
	if len(key) != 64 || len(w) != 0 {
		t.Fatalf("key %q, warnings %v", key, w)
	}
	fi, err := os.Stat(filepath.Join(root, shimclient.KeyFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v", fi, err)
	}
	if again := shimclient.LoadKey(root, &w); again != key {
		t.Errorf("second load gave %q, want %q", again, key)
	}

	other := t.TempDir()
	if err := os.WriteFile(filepath.Join(other, shimclient.KeyFile), []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if k := shimclient.LoadKey(other, &w); len(k) != 64 || k == key || len(w) != 1 {
		t.Errorf("unreadable key: got %q, warnings %v", k, w)
	}
	if b, _ := os.ReadFile(filepath.Join(other, shimclient.KeyFile)); string(b) != "not a key\n" {
		t.Errorf("the file was overwritten: %q", b)
	}
}
