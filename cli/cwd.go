package cli

import "os"

// cwd is the working directory relative flag paths are taken from.
func cwd() string {
	d, err := os.Getwd()
	if err != nil {
		return "/"
	}
	return d
}
