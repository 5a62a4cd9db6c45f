package wrapper

import (
	"os"
	"testing"

	"sandtop/testreap"
)

// These tests run the wrapper scripts, which start process groups of their own; none may outlive them.
func TestMain(m *testing.M) {
	testreap.Warden()
	os.Exit(m.Run())
}
