package control

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"sandtop/wrapper"
)

// statesScanScript reads every state directory under $1/processes with one
// find and shell builtins, so a listing on stock envd costs one command
// however many groups there are. It prints NUL-terminated fields:
//
//	the entries: type (find's %y), path relative to processes/ ("id" or
//	"id/name"), size, mtime in seconds; then "--files--";
//	each small published file: its relative path and its content (cut at
//	1 KiB; up to its first NUL); then "--argv--" and each argv: its path,
//	its argument count and the arguments that fit in 6 KiB.
//
// Links are never followed: find does not, and a file read must be a
// regular file that is not a link, in a directory that is not a link.
const statesScanScript = `
cd -- "$1/processes" 2>/dev/null || { printf -- '--files--\0'; exit 0; }
find . -mindepth 1 -maxdepth 2 -printf '%y\0%P\0%s\0%T@\0'
printf -- '--files--\0'
shopt -s nullglob
for f in */pid */exit-code */signal */tag */problem */supervisor; do
  [ -f "$f" ] && [ ! -L "$f" ] && [ ! -L "${f%/*}" ] || continue
  v=
  IFS= read -r -d '' v <"$f"
  printf '%s\0%s\0' "$f" "${v:0:1024}"
done
printf -- '--argv--\0'
for f in */argv; do
  [ -f "$f" ] && [ ! -L "$f" ] && [ ! -L "${f%/*}" ] || continue
  mapfile -d '' -t a <"$f"
  # Keep the arguments that fit in 6 KiB, as the argv file's first bytes.
  n=0 size=0
  for x in "${a[@]}"; do
    size=$((size + ${#x} + 1))
    [ "$size" -le 6144 ] || break
    n=$((n + 1))
  done
  printf '%s\0%d\0' "$f" "$n"
  if [ "$n" -gt 0 ]; then printf '%s\0' "${a[@]:0:n}"; fi
done
`

// ReadAllStates reads every state directory of root with one command.
func (c Compat) ReadAllStates(ctx context.Context, root string) ([]StateFiles, error) {
	r, err := c.Runner.Run(ctx, statesScanScript, []string{root}, nil)
	if err != nil {
		return nil, fmt.Errorf("read the state directories: %w", err)
	}
	if r.ExitCode != 0 {
		// A sandbox without GNU find (or its -printf): the caller reads
		// the directories one by one instead.
		return nil, fmt.Errorf("read the state directories: exit %d: %s: %w", r.ExitCode, ClipText(r.Stderr), ErrUnsupported)
	}
	return parseStatesScan(r.Stdout)
}

func parseStatesScan(out []byte) ([]StateFiles, error) {
	head, rest, ok := bytes.Cut(out, []byte("--files--\x00"))
	if !ok {
		return nil, fmt.Errorf("read the state directories: the scan's output is cut short")
	}
	small, argvs, _ := bytes.Cut(rest, []byte("--argv--\x00"))
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
	}
	f = fields(small)
	for i := 0; i+1 < len(f); i += 2 {
		if id, name, ok := strings.Cut(f[i], "/"); ok {
			get(id).files[name] = f[i+1]
		}
	}
	f = fields(argvs)
	for i := 0; i+1 < len(f); {
		n, err := strconv.Atoi(f[i+1])
		if err != nil || n < 0 || i+2+n > len(f) {
			return nil, fmt.Errorf("read the state directories: a bad argv record for %q", f[i])
		}
		var b strings.Builder
		for _, a := range f[i+2 : i+2+n] {
			b.WriteString(a)
			b.WriteByte(0)
		}
		if id, _, ok := strings.Cut(f[i], "/"); ok {
			get(id).files[wrapper.ArgvFile] = b.String()
		}
		i += 2 + n
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
