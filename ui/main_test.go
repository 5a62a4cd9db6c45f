package ui

import (
	"os"
	"testing"

	"sandtop/backend/shim"
)

// The fleet test runs a daemon in this binary, whose shims are this binary
// started again: it must enter the shim before the tests run.
func TestMain(m *testing.M) {
	shim.RunIfSubcommand()
	os.Exit(m.Run())
}
