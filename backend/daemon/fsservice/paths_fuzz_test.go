package fsservice

import (
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// FuzzResolvePath: any request path resolves to an absolute path (clean when
// it was relative or "~"-based), and only "~user" forms and paths beyond
// the system's limit are refused.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"", "~", "~/", "~/a/../..", "~root/x", "a/b", "../x", "/etc/passwd", "/a/./b//c", "\x00", strings.Repeat("../", 50)} {
		f.Add(s)
	}
	const home = "/home/user"
	f.Fuzz(func(t *testing.T, p string) {
		got, err := resolvePath(p, home)
		if err != nil {
			if !strings.HasPrefix(p, "~") && len(p) < unix.PathMax {
				t.Fatalf("%q refused: %v", p, err)
			}
			return
		}
		if !filepath.IsAbs(got) {
			t.Fatalf("%q resolved to %q, not absolute", p, got)
		}
		if !filepath.IsAbs(p) && filepath.Clean(got) != got {
			t.Fatalf("%q resolved to %q, not clean", p, got)
		}
		if p == "" || p == "~" {
			if got != home {
				t.Fatalf("%q resolved to %q, want the home", p, got)
			}
		}
	})
}
