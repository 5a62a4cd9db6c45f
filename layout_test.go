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

// The seam's parts (its control planes, terminals and discovery) are the
// seam's own: every other package, its tests included, goes through the
// seam's Runtime, so the seam can change them without a caller noticing.
func TestOnlyTheSeamImportsItsParts(t *testing.T) {
	const seam = "sandtop/backend/seam"
	parts := []string{seam + "/control", seam + "/discover", seam + "/terminal"}
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := false
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		inside := pkg == seam || strings.HasPrefix(pkg, seam+"/")
		for _, part := range parts {
			if !slices.Contains(imports, part) {
				continue
			}
			if inside {
				seen = true
				continue
			}
			t.Errorf("%s imports %s, a part of the seam; use the seam's Runtime", pkg, part)
		}
	}
	if !seen {
		t.Fatalf("no package imports the seam's parts, not even the seam: the listing was not read\n%s", out)
	}
}

// The daemon's parts (its subpackages) sit below it: the daemon composes
// them, and none of them, nor its tests, reaches back into the daemon or
// its test harness, directly or through another package. So each part
// can be read, and tested, on its own.
func TestDaemonPartsDoNotImportTheDaemon(t *testing.T) {
	const daemon = "sandtop/backend/daemon"
	above := []string{daemon, "sandtop/backend/daemontest"}
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Deps " "}} {{join .TestImports " "}} {{join .XTestImports " "}}`, "./backend/daemon/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	parts := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, imports := fields[0], fields[1:]
		if !strings.HasPrefix(pkg, daemon+"/") {
			continue
		}
		parts++
		for _, a := range above {
			if slices.Contains(imports, a) {
				t.Errorf("%s (or its tests) depends on %s; a part of the daemon must not: move what both need into the part", pkg, a)
			}
		}
	}
	if parts < 5 {
		t.Fatalf("found %d parts of the daemon, want at least 5: the listing was not read\n%s", parts, out)
	}
}

// Every package whose tests start processes runs them under testreap's
// warden, so what they leave behind dies with the test binary, also when
// go test's timeout kills it.
func TestTestsThatStartProcessesRunUnderTheWarden(t *testing.T) {
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{.Dir}} {{join .TestGoFiles ","}} {{join .XTestGoFiles ","}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	starts := regexp.MustCompile(`exec\.Command|daemontest\.|os\.StartProcess|"tmux"`)
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] == "sandtop/testreap" {
			continue
		}
		var src strings.Builder
		for _, files := range f[2:] {
			for _, name := range strings.Split(files, ",") {
				b, err := os.ReadFile(f[1] + "/" + name)
				if err != nil {
					t.Fatal(err)
				}
				src.Write(b)
			}
		}
		if !starts.MatchString(src.String()) {
			continue
		}
		checked++
		if !strings.Contains(src.String(), "testreap.Warden()") {
			t.Errorf("%s: its tests start processes but its TestMain does not call testreap.Warden()", f[0])
		}
	}
	if checked < 10 {
		t.Fatalf("found %d packages whose tests start processes; the listing was not read\n%s", checked, out)
	}
}
