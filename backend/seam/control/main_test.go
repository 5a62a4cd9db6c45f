package control

import (
	"os"
	"testing"

	"sandtop/testreap"
)

// These tests run shells and the scanner scripts; none may outlive them.
func TestMain(m *testing.M) {
	testreap.Warden()
	os.Exit(m.Run())
}
