package target_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sandtop/backend/target"
)

// --ca-file is for a daemon's own TLS: on plain HTTP, or with a file that
// holds no certificate, Dial says so rather than dialling without it.
func TestCAFileIsCheckedBeforeDialling(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ endpoint, ca, want string }{
		{"http://10.0.0.5:49983", notPEM, "goes with an https:// endpoint"},
		{"https://10.0.0.5:49983", notPEM, "holds no PEM certificate"},
		{"https://10.0.0.5:49983", filepath.Join(dir, "missing.pem"), "missing.pem"},
	}
	for _, c := range cases {
		_, err := target.Dial(target.Target{Name: "x", Kind: target.KindEnvd, Endpoint: c.endpoint, CAFile: c.ca})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Dial %s with --ca-file %s: %v; want %q", c.endpoint, c.ca, err, c.want)
		}
	}
}
