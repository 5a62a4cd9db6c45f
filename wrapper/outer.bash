# sandtop wrapper, outer half. It runs as the command process.Process/Start
# launched (bash --noprofile --norc -c), in whatever environment the daemon
# gives commands. The Go side prepends assignments for: state, stdin_mode,
# out_cap, err_cap, inner, and sets "$@" to the requested argv.
#
# Stdin starts with "<length>\n" and that many bytes of NUL-framed child
# environment; everything after it belongs to the requested program.

fail() { printf 'sandtop-wrapper: %s\n' "$1" >&2; exit 125; }

env_bin=$(type -P env) || fail 'env not found'
setsid_bin=$(type -P setsid) || fail 'setsid not found'
tee_bin=$(type -P tee) || fail 'tee not found'
head_bin=$(type -P head) || fail 'head not found'
rm_bin=$(type -P rm) || fail 'rm not found'
mkdir_bin=$(type -P mkdir) || fail 'mkdir not found'

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

IFS= read -r env_len || fail 'missing environment header on stdin'
case $env_len in '' | *[!0-9]*) fail 'malformed environment header' ;; esac
if [ "$env_len" -gt 0 ]; then
	"$head_bin" -c "$env_len" >"$state/environment" || fail 'cannot store the environment'
else
	: >"$state/environment"
fi

"$env_bin" -i "$setsid_bin" --wait "$BASH" --noprofile --norc -c "$inner" sandtop-wrapper \
	"$state" "$stdin_mode" "$out_cap" "$err_cap" "$user_umask" \
	"$env_bin" "$tee_bin" "$head_bin" "$rm_bin" -- "$@"
rc=$?

# Make our own wait status carry the direct command's fatal signal, so the
# daemon (and envd's end event) report it. When the inner half was killed
# before it could publish anything, setsid exits with the raw signal number.
sig=
{ read -r sig <"$state/signal"; } 2>/dev/null
if [ -z "$sig" ]; then
	code=
	{ read -r code <"$state/exit-code"; } 2>/dev/null
	if [ -z "$code" ] && [ "$rc" -gt 1 ] && [ "$rc" -lt 65 ]; then sig=$rc; fi
fi
if [ -n "$sig" ]; then
	ulimit -c 0
	trap - "$sig" 2>/dev/null
	kill -"$sig" "$$" 2>/dev/null
fi
exit "$rc"
