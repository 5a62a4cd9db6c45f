package main

import "github.com/spf13/cobra"

func newDemoCmd(g *globalFlags) *cobra.Command {
	return &cobra.Command{Use: "demo", Short: "Start a demo workload on the local sandbox and open the TUI on it"}
}
