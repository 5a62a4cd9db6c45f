package discover

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"

	"sandtop/backend/seam/control"
)

// One control command reads a DeepSeek Harness agent's whole state layout
// and the process table in the same breath, so discovery costs a single
// round trip and states are judged against one snapshot. It works the same
// on stock envd and on our daemon: the agent's root lies outside our
// daemon's runtime root, where the extension's ReadFile cannot reach.

// agentScanScript prints, NUL-separated, for every state dir:
//
//	kind, id, pid ('Y'+content or 'N'), exit-code (same), stdout.log size,
//	stderr.log size (-1 when absent), argv ('Y'+base64 of its first 6 KiB,
//	which holds NULs, or 'N')
//
// (a terminal dir has no pid: its pid field is 'Y'+the number of files),
// then the record "--ps--" and the process table in the seam's ps format
// (control.ParsePsTable).
const agentScanScript = `
shopt -s nullglob
root=$1
for kind in processes terminals; do
  for d in "$root/$kind"/*/; do
    d=${d%/}
    [ -d "$d" ] && [ ! -L "$d" ] || continue
    printf '%s\0%s\0' "$kind" "${d##*/}"
    if [ "$kind" = terminals ]; then
      # No pid here; report whether the setup files are still present.
      files=("$d"/*)
      printf 'Y%d\0N\0-1\0-1\0N\0' "${#files[@]}"
      continue
    fi
    for f in pid exit-code; do
      if [ -f "$d/$f" ]; then printf Y; head -c 64 -- "$d/$f" | tr -d '\0'; else printf N; fi
      printf '\0'
    done
    for f in stdout.log stderr.log; do
      if [ -f "$d/$f" ]; then stat -c %s -- "$d/$f" | tr -d '\n'; else printf %s -1; fi
      printf '\0'
    done
    if [ -f "$d/argv" ]; then printf Y; head -c 6144 -- "$d/argv" | base64 -w0; else printf N; fi
    printf '\0'
  done
done
printf -- '--ps--\0'
exec ps -e -o pid= -o pgid= -o sid= -o stat=
`

// agentEntry is one state dir as the scan saw it.
type agentEntry struct {
	kind, id      string
	pid, exitCode *string // nil when the file is absent
	stdoutSize    int64   // -1 when absent
	stderrSize    int64
	argv          *string // the argv file's (first) bytes; nil when absent
}

// agentSnapshot is what one scan returned.
type agentSnapshot struct {
	entries []agentEntry
	procs   []control.ProcessEntry
}

// agentControlEnv keeps the scan's output parseable and its shell plain.
var agentControlEnv = map[string]string{"LC_ALL": "C", "BASH_ENV": "", "ENV": ""}

func scanAgent(ctx context.Context, run control.Runner, agentRoot string) (agentSnapshot, error) {
	r, err := run.Run(ctx, agentScanScript, []string{agentRoot}, nil)
	if err != nil {
		return agentSnapshot{}, fmt.Errorf("agent: scanning %s: %w", agentRoot, err)
	}
	if r.ExitCode != 0 {
		return agentSnapshot{}, fmt.Errorf("agent: scanning %s: exit code %d: %s", agentRoot, r.ExitCode, control.ClipText(r.Stderr))
	}
	return parseAgentScan(r.Stdout)
}

func parseAgentScan(out []byte) (agentSnapshot, error) {
	var snap agentSnapshot
	head, table, ok := bytes.Cut(out, []byte("--ps--\x00"))
	if !ok {
		return snap, fmt.Errorf("agent: scan output lacks the process table")
	}
	fields := strings.Split(string(head), "\x00")
	if n := len(fields); n > 0 && fields[n-1] == "" {
		fields = fields[:n-1]
	}
	const perRecord = 7
	if len(fields)%perRecord != 0 {
		return snap, fmt.Errorf("agent: scan output has %d fields, not records of %d", len(fields), perRecord)
	}
	for i := 0; i < len(fields); i += perRecord {
		e := agentEntry{kind: fields[i], id: fields[i+1]}
		var err error
		if e.pid, err = presentFile(fields[i+2]); err == nil {
			e.exitCode, err = presentFile(fields[i+3])
		}
		if err == nil {
			e.stdoutSize, err = strconv.ParseInt(fields[i+4], 10, 64)
		}
		if err == nil {
			e.stderrSize, err = strconv.ParseInt(fields[i+5], 10, 64)
		}
		if err == nil {
			e.argv, err = presentBase64(fields[i+6])
		}
		if err != nil {
			return snap, fmt.Errorf("agent: scan record for %s/%s: %w", e.kind, e.id, err)
		}
		snap.entries = append(snap.entries, e)
	}
	procs, err := control.ParsePsTable(table)
	if err != nil {
		return snap, fmt.Errorf("agent: %w", err)
	}
	snap.procs = procs
	return snap, nil
}

// files is the entry in Groups' terms.
func (e agentEntry) files() control.StateFiles {
	return control.StateFiles{ID: e.id, Pid: e.pid, ExitCode: e.exitCode, StdoutSize: e.stdoutSize, StderrSize: e.stderrSize, Argv: e.argv}
}

// Scanner reads a state root with the scan: one control command that
// works on either plane and outside the extension's runtime root.
type Scanner struct{ Runner control.Runner }

func (d Scanner) readStates(ctx context.Context, root string) ([]control.StateFiles, []control.ProcessEntry, error) {
	snap, err := scanAgent(ctx, d.Runner, root)
	if err != nil {
		return nil, nil, err
	}
	var out []control.StateFiles
	for _, e := range snap.entries {
		if e.kind == "processes" {
			out = append(out, e.files())
		}
	}
	return out, snap.procs, nil
}

// presentFile decodes the scan's 'Y'+content / 'N' encoding.
func presentFile(field string) (*string, error) {
	switch {
	case field == "N":
		return nil, nil
	case strings.HasPrefix(field, "Y"):
		s := field[1:]
		return &s, nil
	}
	return nil, fmt.Errorf("bad file marker %q", field)
}

// presentBase64 is presentFile for a field the scan base64-encoded. The
// encoding may be cut at any byte; what decodes is kept.
func presentBase64(field string) (*string, error) {
	s, err := presentFile(field)
	if s == nil || err != nil {
		return s, err
	}
	enc := (*s)[:len(*s)/4*4]
	b, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("bad base64 field: %w", err)
	}
	text := string(b)
	return &text, nil
}
