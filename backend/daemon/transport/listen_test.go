package transport_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sandtop/backend/daemon/transport"
)

func TestListenRules(t *testing.T) {
	if _, err := transport.Listen("0.0.0.0:0", ""); err == nil || !strings.Contains(err.Error(), "a token is required") {
		t.Errorf("non-loopback without token: %v", err)
	}
	if _, err := transport.Listen(":0", ""); err == nil {
		t.Errorf("all-interfaces without token was accepted")
	}
	l, err := transport.Listen("0.0.0.0:0", "tok")
	if err != nil {
		t.Errorf("non-loopback with token: %v", err)
	} else {
		l.Close()
	}
	l, err = transport.Listen("127.0.0.1:0", "")
	if err != nil {
		t.Errorf("loopback without token: %v", err)
	} else {
		l.Close()
	}

	open := t.TempDir()
	if err := os.Chmod(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := transport.Listen("unix:"+filepath.Join(open, "s.sock"), ""); err == nil || !strings.Contains(err.Error(), "open to other users") {
		t.Errorf("socket in a 0755 dir without token: %v", err)
	}
	l, err = transport.Listen("unix:"+filepath.Join(open, "s.sock"), "tok")
	if err != nil {
		t.Errorf("socket in a 0755 dir with token: %v", err)
	} else {
		l.Close()
	}
}
