package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The README's architecture table names every Go package once, and only
// packages that exist: it is the map of the code, so it must not drift.
func TestReadmeArchitectureMatchesThePackages(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, p := range strings.Fields(string(out)) {
		p = strings.TrimPrefix(strings.TrimPrefix(p, "sandtop"), "/")
		if p == "" {
			p = "."
		}
		pkgs = append(pkgs, p)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, arch, _ := strings.Cut(string(readme), "| package | one job |")
	arch, _, _ = strings.Cut(arch, "\n\n")
	var listed []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)`").FindAllStringSubmatch(arch, -1) {
		listed = append(listed, strings.TrimSuffix(m[1], "/"))
	}
	slices.Sort(pkgs)
	slices.Sort(listed)
	if !slices.Equal(pkgs, listed) {
		t.Fatalf("README architecture lists\n  %v\ngo list has\n  %v", listed, pkgs)
	}
}
