package fsservice

import (
	"fmt"
	"path/filepath"
)

// resolvePath turns a request path into an absolute one the way envd does:
// empty means the user's home, "~" and "~/x" are under the home, a relative
// path is relative to the home, and an absolute path is taken as given.
func resolvePath(p, home string) (string, error) {
	if p == "" {
		return home, nil
	}
	if p[0] == '~' {
		if len(p) > 1 && p[1] != '/' {
			return "", fmt.Errorf("path %q: ~user is not supported, only ~ and ~/", p)
		}
		return filepath.Join(home, p[1:]), nil
	}
	if filepath.IsAbs(p) {
		return p, nil
	}
	return filepath.Join(home, p), nil
}
