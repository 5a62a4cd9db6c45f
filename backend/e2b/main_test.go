package e2b

import (
	"os"
	"testing"

	"sandtop/backend/shim"
	"sandtop/testreap"
)

// The daemon these tests run starts this test binary as its shims, and the
// seam uploads it as the supervisor: it must be able to be one.
func TestMain(m *testing.M) {
	shim.RunIfSubcommand()
	testreap.Warden()
	os.Exit(m.Run())
}
