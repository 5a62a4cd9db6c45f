package shim_test

import (
	"os"
	"testing"

	"sandtop/testreap"
)

// These tests start process trees and a daemon; none may outlive them. This
// binary must not call shim.RunIfSubcommand (see entry_test.go).
func TestMain(m *testing.M) {
	testreap.Warden()
	os.Exit(m.Run())
}
