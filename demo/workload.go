// Package demo is the workload "sandtop demo" starts: a handful of
// processes that look like what a coding agent leaves behind in a sandbox,
// each one exercising a part of the TUI. Everything is plain bash (plus
// top), passed inline, so it runs on any sandbox, not only the local one.
package demo

import "strings"

// TagPrefix marks demo processes; a re-run finds and replaces them by it.
const TagPrefix = "demo:"

// Kind says how an item is started.
type Kind int

const (
	Process  Kind = iota // a process group with collected output
	Terminal             // a PTY session
)

// Item is one demo process.
type Item struct {
	// Name is unique in the workload; the tag is TagPrefix+Name.
	Name string
	Kind Kind
	// What is shown when the demo prints what it started.
	What string
	Argv []string
	// Optional items are skipped, with a note, when their program is
	// missing from the sandbox (top on a minimal image).
	Optional bool
	// Finishes is true for items expected to exit on their own.
	Finishes bool
}

// script drops the leading newline of a raw-string script, so listings
// show its first command rather than "\n".
func script(s string) string { return strings.TrimLeft(s, "\n") }

// Tag is the item's tag.
func (it Item) Tag() string { return TagPrefix + it.Name }

// Workload is the demo, in start order.
func Workload() []Item {
	return []Item{
		{Name: "build", Kind: Process, What: "a noisy build log (coloured, with warnings, never ends)",
			Argv: []string{"bash", "-c", script(buildScript)}},
		{Name: "dev-server", Kind: Process, What: "a dev server whose workers ignore SIGTERM (tear it down to see SIGKILL)",
			Argv: []string{"bash", "-c", script(devServerScript)}},
		{Name: "migrate", Kind: Process, What: "a finished job that failed with exit code 3", Finishes: true,
			Argv: []string{"bash", "-c", script(failedJobScript)}},
		{Name: "confirm", Kind: Terminal, What: "a shell waiting for input (attach and answer it)",
			Argv: []string{"bash", "-c", script(promptScript)}},
		{Name: "top", Kind: Terminal, What: "a full-screen top", Optional: true,
			Argv: []string{"top", "-d", "2"}},
	}
}

// buildScript prints compiler-like output forever, a few lines a second,
// with colour and the occasional warning.
const buildScript = `
i=0
pkgs=(api auth billing cache cli config db events gateway jobs metrics search storage ui worker)
while :; do
  i=$((i+1))
  p=${pkgs[$((RANDOM % ${#pkgs[@]}))]}
  case $((i % 17)) in
    0) printf '\033[33mwarning:\033[0m %s/handler.go:%d: unused variable "tmp"\n' "$p" $((RANDOM % 400)) ;;
    5) printf '\033[32mok\033[0m   sandbox/%s\t%d.%03ds\n' "$p" $((RANDOM % 3)) $((RANDOM % 1000)) ;;
    *) printf '\033[2m[%5d]\033[0m compiling sandbox/%s (%d files)\n' "$i" "$p" $((RANDOM % 40 + 1)) ;;
  esac
  sleep 0.$((RANDOM % 3 + 1))
done
`

// devServerScript is a leader that exits on SIGTERM with two workers
// that ignore it: a teardown only empties the group with SIGKILL.
const devServerScript = `
for w in 1 2; do
  (trap '' TERM; while :; do sleep 1; done) &
done
echo "dev server listening on http://127.0.0.1:5173 (workers: $(jobs -p | tr '\n' ' '))"
n=0
while :; do
  n=$((n+1))
  echo "GET /api/items?page=$((n % 7)) 200 $((RANDOM % 90 + 3))ms"
  sleep 2
done
`

// failedJobScript fails like a migration against a missing table.
const failedJobScript = `
echo "running migrations (3 pending)"
echo "  001_create_accounts ... ok"
echo "  002_add_index_users_email ... "
sleep 0.3
echo 'error: relation "users" does not exist' >&2
exit 3
`

// promptScript waits for an answer at a prompt, then leaves an
// interactive shell behind.
const promptScript = `
printf 'Deploy build 1742 to staging? [y/N] '
read -r answer
echo "answer: ${answer:-N}"
exec bash --norc -i
`
