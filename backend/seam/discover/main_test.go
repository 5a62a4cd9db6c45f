package discover

import (
	"os"
	"testing"

	"sandtop/testreap"
)

// These tests start sleeps and the scan script; none may outlive them.
func TestMain(m *testing.M) {
	testreap.Warden()
	os.Exit(m.Run())
}
