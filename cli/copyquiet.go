package cli

import "io"

// copyQuiet copies until EOF or an error; a stream cut short (the program
// was killed, the sandbox went away) is not worth a message of its own
// because the outcome reports it.
func copyQuiet(w io.Writer, r io.Reader) {
	if r == nil {
		return
	}
	_, _ = io.Copy(w, r)
}
