package fsservice

import (
	"fmt"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// resolvePath turns a request path into an absolute one the way envd does:
// empty means the user's home, "~" and "~/x" are under the home, a relative
// path is relative to the home, and an absolute path is taken as given.
// A path beyond the system's limit is refused at once: the kernel would
// refuse it anyway, and walking its components first (MkdirAll) could take
// minutes.
func resolvePath(p, home string) (string, error) {
	if len(p) >= unix.PathMax {
		return "", fmt.Errorf("path %q is %d bytes, beyond the system's limit of %d", clip(p), len(p), unix.PathMax-1)
	}
	if p == "" {
		return home, nil
	}
	if p[0] == '~' {
		if len(p) > 1 && p[1] != '/' {
			return "", fmt.Errorf("path %q: ~user is not supported, only ~ and ~/", clip(p))
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.Join(home, p), nil
}
