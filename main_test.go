package main

import (
	"os"
	"testing"

	"sandtop/testreap"
)

// The layout checks run go list, which must not outlive the tests.
func TestMain(m *testing.M) {
	testreap.Warden()
	os.Exit(m.Run())
}
