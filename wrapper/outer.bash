# sandtop wrapper, outer half. It runs as the command process.Process/Start
# launched (bash --noprofile --norc -c), in whatever environment the daemon
# gives commands. The Go side prepends assignments for: state, stdin_mode,
# out_cap, err_cap, tag, inner, and sets "$@" to the requested argv.
#
# Stdin starts with "<count>\n" and that many NUL-terminated NAME=VALUE
# entries of child environment; everything after belongs to the program.

fail() { printf 'sandtop-wrapper: %s\n' "$1" >&2; exit 125; }

prepare
find_tool setsid setsid_bin
find_tool mkdir mkdir_bin

"$mkdir_bin" -p -m 700 -- "$state" || fail "cannot create $state"
: >"$state/pid" || fail "cannot write into $state"
create_state_files "$@"
read_environment
if [ "${#entries[@]}" -gt 0 ]; then printf '%s\0' "${entries[@]}" >"$state/environment"; else : >"$state/environment"; fi
unset entries

# exec -c starts setsid with an empty environment (like env -i) in a
# subshell, saving a process.
(exec -c "$setsid_bin" --wait "$BASH" --noprofile --norc -c "$inner" sandtop-wrapper \
	"$state" "$stdin_mode" "$out_cap" "$err_cap" "$user_umask" \
	"$env_bin" "$tee_bin" "$head_bin" "$rm_bin" "$stdbuf_bin" -- "$@")
rc=$?

# Make our own wait status carry the program's fatal signal, so the
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
