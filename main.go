// Command sandtop supervises the processes of sandboxes: a Bubble Tea TUI
// (plain "sandtop") and a CLI with the same operations, over one seam, on
// the embedded local sandbox or on any envd-compatible daemon.
package main

import (
	"os"

	"sandtop/backend/shim"
	"sandtop/cli"
)

func main() {
	// First: started as its own shim or supervisor, the executable is
	// that and nothing else.
	shim.RunIfSubcommand()
	os.Exit(cli.Main(os.Args[1:]))
}
