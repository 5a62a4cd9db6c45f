package ui

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"sandtop/backend/shim"
	"sandtop/testreap"
)

// The fleet test runs a daemon in this binary, whose shims are this binary
// started again: it must enter the shim before the tests run, and so must
// TestIdleCPU's idle program. The end-to-end tests share one build of
// sandtop; on a whole run it is built while the quick tests run.
func TestMain(m *testing.M) {
	shim.RunIfSubcommand()
	if os.Getenv(idleCPUEnv) != "" {
		if err := idleCPUChild(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	testreap.Warden()
	flag.Parse()
	// The parallel tests (end to end, idle CPU) wait on other processes,
	// not on this one's CPU: unless -parallel says otherwise, they run all
	// at once rather than GOMAXPROCS at a time.
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		_ = flag.Set("test.parallel", "8")
	}
	if !testing.Short() && flag.Lookup("test.run").Value.String() == "" {
		go func() { _, _ = sandtopBinary() }()
	}
	code := m.Run()
	buildDir.Lock()
	if buildDir.path != "" {
		os.RemoveAll(buildDir.path)
	}
	buildDir.Unlock()
	os.Exit(code)
}
