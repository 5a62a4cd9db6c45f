package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"sandtop/backend/daemon"
)

// version is sandtop's release; a release build sets it with
// -ldflags "-X main.version=...".
var version = "0.1.0-dev"

func versionString() string {
	return fmt.Sprintf("%s (daemon %s, %s, %s/%s)", version, daemon.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print sandtop's version",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintln(cmd.OutOrStdout(), "sandtop "+versionString())
			return nil
		},
	}
}
