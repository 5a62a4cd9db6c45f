# sandtop wrapper, outer half. It runs as the command process.Process/Start
# launched (bash --noprofile --norc -c), in whatever environment the daemon
# gives commands. The Go side prepends assignments for: state, stdin_mode,
# out_cap, err_cap, tag, inner, and sets "$@" to the requested argv.
#
# Stdin starts with "<count>\n" and that many NUL-terminated NAME=VALUE
# entries of child environment; everything after belongs to the program.

fail() { printf 'sandtop-wrapper: %s\n' "$1" >&2; exit 125; }

# PATH lookups without command substitution: every fork costs a spawn.
look_up() {
	local dir
	local -a dirs
	IFS=: read -r -a dirs <<<"$PATH"
	for dir in "${dirs[@]}"; do
		if [ -f "$dir/$1" ] && [ -x "$dir/$1" ]; then
			printf -v "$2" '%s' "$dir/$1"
			return 0
		fi
	done
	return 1
}
find_tool() { look_up "$1" "$2" || fail "$1 not found on PATH"; }
find_tool env env_bin
find_tool setsid setsid_bin
find_tool tee tee_bin
find_tool head head_bin
# Optional: without it, spills lag behind a running program (see inner).
stdbuf_bin=
look_up stdbuf stdbuf_bin
find_tool rm rm_bin
find_tool mkdir mkdir_bin

# The requested program keeps the user's umask; only our state is private.
user_umask=0022
while read -r key value; do
	if [ "$key" = Umask: ]; then user_umask=$value; fi
done </proc/$$/status
umask 077

"$mkdir_bin" -p -m 700 -- "$state" || fail "cannot create $state"
: >"$state/pid" && : >"$state/exit-code" || fail "cannot write into $state"
if [ "$out_cap" -ge 0 ]; then : >"$state/stdout.log"; fi
if [ "$err_cap" -ge 0 ]; then : >"$state/stderr.log"; fi
if [ -n "$tag" ]; then printf '%s\n' "$tag" >"$state/tag"; fi
# The requested argv, so a finished group can still say what it ran.
printf '%s\0' "$@" >"$state/argv"

IFS= read -r env_count || fail 'missing environment header on stdin'
case $env_count in '' | *[!0-9]*) fail 'malformed environment header' ;; esac
# read stops at each NUL and never reads past the payload, so the rest of
# stdin stays for the program.
entries=()
for ((i = 0; i < env_count; i++)); do
	IFS= read -r -d '' entry || fail 'truncated environment on stdin'
	entries+=("$entry")
done
if [ "$env_count" -gt 0 ]; then printf '%s\0' "${entries[@]}" >"$state/environment"; else : >"$state/environment"; fi
unset entries entry

# exec -c starts setsid with an empty environment (like env -i) in a
# subshell, saving a process.
(exec -c "$setsid_bin" --wait "$BASH" --noprofile --norc -c "$inner" sandtop-wrapper \
	"$state" "$stdin_mode" "$out_cap" "$err_cap" "$user_umask" \
	"$env_bin" "$tee_bin" "$head_bin" "$rm_bin" "$stdbuf_bin" -- "$@")
rc=$?

# Make our own wait status carry the direct command's fatal signal, so the
# daemon (and envd's end event) report it. When the inner half itself was
# killed before it could publish anything, its own death is the answer.
sig=
{ read -r sig <"$state/signal"; } 2>/dev/null
if [ -z "$sig" ]; then
	code=
	{ read -r code <"$state/exit-code"; } 2>/dev/null
	if [ -z "$code" ] && [ "$rc" -gt 128 ] && [ "$rc" -lt 193 ]; then
		# Killed with its group (SIGKILL) before it could publish: the
		# command went the same way, and discovery should say so too.
		sig=$((rc - 128))
		{ printf '%s\n' "$sig" >"$state/signal" && printf '%s\n' "$rc" >"$state/exit-code"; } 2>/dev/null
	fi
fi
if [ -n "$sig" ]; then
	ulimit -c 0
	trap - "$sig" 2>/dev/null
	kill -"$sig" "$$" 2>/dev/null
fi
exit "$rc"
