package control

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sandtop/backend/procscan"
	"sandtop/wrapper"
)

// statesScanScript reads every state directory under $1/processes with
// three small programs (find, xargs, grep) however many groups there are,
// so a listing on stock envd costs one command. It prints NUL-terminated
// records:
//
//	the entries, four fields each: type (find's %y), path relative to
//	processes/ ("id" or "id/name"), size, mtime in seconds; then
//	"--files--";
//	each small published file (up to 1 KiB) as "./id/name:content" (up to
//	its first NUL), and each argument of each argv file (up to 64 KiB) as
//	"./id/argv:argument".
//
// Links are never followed: find neither descends into a linked directory
// nor lists a link as a file (-type f). Where sandtop's supervisor is
// installed ($2), it prints the same scan in one process instead (see
// procscan).
const statesScanScript = `shopt -s execfail
[ -n "$2" ] && [ -x "$2" ] && exec "$2" ` + procscan.StatesSubcommand + ` "$1"
command -v find >/dev/null && command -v xargs >/dev/null && command -v grep >/dev/null || exit 3
cd -- "$1/processes" 2>/dev/null || { printf -- '--files--\0'; exit 0; }
find . -mindepth 1 -maxdepth 2 -printf '%y\0%P\0%s\0%T@\0'
printf -- '--files--\0'
find . -mindepth 2 -maxdepth 2 -type f \( \( -size -2k \( -name pid -o -name exit-code -o -name signal -o -name tag -o -name problem -o -name supervisor \) \) -o \( -name argv -size -65k \) \) -print0 |
	xargs -0 -r grep -z -aH '' 2>/dev/null
exit 0
`

// ReadAllStates reads every state directory of root with one command.
func (c Compat) ReadAllStates(ctx context.Context, root string) ([]StateFiles, error) {
	// Streamed: the scan grows with the groups kept, past what one Run
	// keeps.
	var out bytes.Buffer
	r, err := c.Runner.Stream(ctx, statesScanScript, []string{root, c.Runner.Scanner}, func(b []byte) error { out.Write(b); return nil })
	if err != nil {
		return nil, fmt.Errorf("read the state directories: %w", err)
	}
	if r.ExitCode != 0 {
		// A sandbox without GNU find (or its -printf): the caller reads
		// the directories one by one instead.
		return nil, fmt.Errorf("read the state directories: exit %d: %s: %w", r.ExitCode, ClipText(r.Stderr), ErrUnsupported)
	}
	return parseStatesScan(out.Bytes())
}

// scannedFiles are the files whose content the scan prints.
var scannedFiles = map[string]bool{wrapper.PidFile: true, wrapper.ExitCodeFile: true, wrapper.SignalFile: true,
	wrapper.TagFile: true, wrapper.ProblemFile: true, wrapper.SupervisorFile: true, wrapper.ArgvFile: true}

func parseStatesScan(out []byte) ([]StateFiles, error) {
	head, rest, ok := bytes.Cut(out, []byte("--files--\x00"))
	if !ok {
		return nil, fmt.Errorf("read the state directories: the scan's output is cut short")
	}
	type dir struct {
		entries []DirEntry
		modTime time.Time
		files   map[string]string
	}
	dirs := map[string]*dir{}
	var order []string
	get := func(id string) *dir {
		d := dirs[id]
		if d == nil {
			d = &dir{files: map[string]string{}}
			dirs[id] = d
			order = append(order, id)
		}
		return d
	}
	f := fields(head)
	if len(f)%4 != 0 {
		return nil, fmt.Errorf("read the state directories: %d entry fields, not records of 4", len(f))
	}
	for i := 0; i < len(f); i += 4 {
		kind, rel := f[i], f[i+1]
		size, _ := strconv.ParseInt(f[i+2], 10, 64)
		secs, _ := strconv.ParseFloat(f[i+3], 64)
		id, name, inDir := strings.Cut(rel, "/")
		if !inDir {
			if kind == "d" {
				get(id).modTime = time.UnixMilli(int64(secs * 1000))
			}
			continue
		}
		get(id).entries = append(get(id).entries, DirEntry{Name: name, Dir: kind == "d", Size: size})
		if kind == "f" && size == 0 && scannedFiles[name] {
			get(id).files[name] = "" // grep prints no record for an empty file
		}
	}
	// Each small file's content (the first record of its name), and each
	// argv's arguments in order, those that fit in 6 KiB.
	type argvFile struct {
		b    strings.Builder
		full bool
	}
	argv := map[string]*argvFile{}
	var argvOrder []string
	for _, rec := range fields(rest) {
		rel, content, ok := strings.Cut(strings.TrimPrefix(rec, "./"), ":")
		id, name, inDir := strings.Cut(rel, "/")
		if !ok || !inDir {
			continue
		}
		if name != wrapper.ArgvFile {
			if _, seen := get(id).files[name]; !seen {
				get(id).files[name] = content[:min(len(content), 1024)]
			}
			continue
		}
		a := argv[id]
		if a == nil {
			a = &argvFile{}
			argv[id] = a
			argvOrder = append(argvOrder, id)
		}
		if a.full = a.full || a.b.Len()+len(content)+1 > 6144; !a.full {
			a.b.WriteString(content)
			a.b.WriteByte(0)
		}
	}
	for _, id := range argvOrder {
		get(id).files[wrapper.ArgvFile] = argv[id].b.String()
	}
	var states []StateFiles
	for _, id := range order {
		d := dirs[id]
		if d.modTime.IsZero() && d.entries == nil {
			continue // not a directory (a link or a file in processes/)
		}
		s := StateFilesFrom(id, d.entries, func(name string) *string {
			v, ok := d.files[name]
			if !ok {
				return nil
			}
			return &v
		})
		if v, ok := d.files[wrapper.ArgvFile]; ok && s.Argv == nil && s.Pid != nil {
			// Read anyway: a supervised group's leader shows its argv only
			// as ps renders it, blanks and all.
			s.Argv = &v
		}
		s.ModTime = d.modTime
		states = append(states, s)
	}
	return states, nil
}

// fields splits NUL-terminated fields.
func fields(b []byte) []string {
	s := strings.Split(string(b), "\x00")
	if n := len(s); n > 0 && s[n-1] == "" {
		s = s[:n-1]
	}
	return s
}
