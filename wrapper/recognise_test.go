package wrapper

import (
	"slices"
	"testing"
)

func TestInnerAndOuterAreRecognisedFromTheirArgv(t *testing.T) {
	inv := Invocation{StateDir: "/run/sandtop/processes/p1", Argv: []string{"bash", "-c", "sleep 1 | sleep 2"}, StdoutSpill: 10, StderrSpill: NoSpill}
	_, outerArgv, err := inv.Command("/bin/bash")
	if err != nil {
		t.Fatal(err)
	}
	if dir, ok := Outer(outerArgv); !ok || dir != inv.StateDir {
		t.Fatalf("Outer = %q, %v", dir, ok)
	}
	if !MayBeWrapper(outerArgv) {
		t.Fatal("MayBeWrapper missed the outer half")
	}
	params := []string{"/bin/bash", "--noprofile", "--norc", "-c", "SCRIPT", Marker, "/state", "ignore", "1", "1", "0022",
		"/usr/bin/env", "/usr/bin/tee", "/usr/bin/head", "/usr/bin/rm"}
	for name, argv := range map[string][]string{
		"current": slices.Concat(params, []string{"/usr/bin/stdbuf", "--"}, inv.Argv),
		"older":   slices.Concat(params, []string{"--"}, inv.Argv),
	} {
		dir, requested, ok := Inner(argv)
		if !ok || dir != "/state" || !slices.Equal(requested, inv.Argv) {
			t.Errorf("%s: Inner = %q, %q, %v", name, dir, requested, ok)
		}
		if _, ok := Outer(argv); ok {
			t.Errorf("%s: the inner half taken for the outer", name)
		}
	}
	if _, _, ok := Inner(params); ok {
		t.Error(`an argv without "--" taken for the inner half`)
	}
	if _, _, ok := Inner([]string{"sh", "-c", "echo", Marker, "/x", "--", "ls"}); ok {
		t.Error("a program that only mentions the marker taken for the inner half")
	}
	if !SpillTee([]string{"/usr/bin/tee", spillTeeFlag, "/dev/fd/63"}) || SpillTee([]string{"tee", "out.log"}) {
		t.Error("SpillTee is wrong")
	}
}
