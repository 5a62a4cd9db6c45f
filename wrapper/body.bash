# sandtop wrapper, body: run by the inner half and by the direct form once
# the group is published, the state files exist, child_env holds the child
# environment and fd 7 the job notices. It starts the requested argv and
# publishes its exit status.

# finish ends the wrapper with the command's status. The direct form has no
# outer half to re-raise a fatal signal for the daemon's wait status, so it
# does so itself.
finish() {
	if [ -n "$reraise" ] && [ -n "$2" ]; then
		ulimit -c 0
		trap - "$2"
		kill -s "$2" "$$"
	fi
	exit "$1"
}

# head writes a regular file through stdio and would hold up to a block back
# until it exits, leaving a long-running program's spill empty; stdbuf -o0
# (when the sandbox has it) makes it write each chunk as it reads it.
capped=("$head_bin")
if [ -n "$stdbuf_bin" ]; then capped=("$stdbuf_bin" -o0 "$head_bin"); fi
if [ "$out_cap" -ge 0 ]; then
	exec 5> >("$tee_bin" --output-error=warn-nopipe >("${capped[@]}" -c "$out_cap" >"$state/stdout.log"))
else
	exec 5>&3
fi
if [ "$err_cap" -ge 0 ]; then
	exec 6> >("$tee_bin" --output-error=warn-nopipe >("${capped[@]}" -c "$err_cap" >"$state/stderr.log") >&4)
else
	exec 6>&4
fi

# env treats a leading NAME=VALUE word as an assignment, so such a program
# name is run through bash's exec instead.
case $1 in *=*) set -- "$BASH" -c 'exec -- "$@"' sandtop-exec "$@" ;; esac

if [ -n "$pending" ]; then
	printf '%s\n' "$pending" >"$state/signal"
	printf '%s\n' "$((pending + 128))" >"$state/exit-code"
	finish "$((pending + 128))" "$pending"
fi

umask "$user_umask"
# POSIX mode keeps a dead $! in the job table until `jobs` or `wait` reports
# it, and makes `wait` return early, with the job untouched, when a CHLD
# trap is pending. Without it bash may silently discard the job (at its next
# fork or job notice) before any trap lists it, and a SIGTERM death would be
# published as exit 143. Set here, after the process substitutions.
set -o posix
trap 'jobs -l >&7' CHLD
# Asynchronous commands get SIGINT/SIGQUIT ignored and stdin from /dev/null
# unless told otherwise; undo both.
if [ "$stdin_mode" = ignore ]; then
	"$env_bin" -i --default-signal "${child_env[@]}" "$@" </dev/null >&5 2>&6 3>&- 4>&- 5>&- 6>&- 7>&- &
else
	"$env_bin" -i --default-signal "${child_env[@]}" "$@" <&0 >&5 2>&6 3>&- 4>&- 5>&- 6>&- 7>&- &
fi
child=$!
# From here on we outlive group signals so the status gets published; the
# child got every signal back at its default through env --default-signal.
trap '' TERM INT HUP QUIT
if [ -n "$pending" ]; then kill -s "$pending" "$child" 2>/dev/null; fi
exec 5>&- 6>&- 0</dev/null
unset child_env

# Each CHLD trap (ours, or a tee's) cuts a wait short with 145 and leaves
# the job alone; a wait that does collect the child returns its status, and
# later ones 127. Keep the one that says something.
waited=
while kill -0 "$child" 2>/dev/null; do
	wait "$child"
	r=$?
	case $r in 127 | 145) ;; *) waited=$r ;; esac
done
# Unless a trap already listed it, the job is still in the table: list it
# now, so fd 7 holds bash's own record of how the child ended.
jobs -l >&7

how=
while IFS= read -r line; do
	set -f
	set -- $line
	while [ $# -gt 1 ]; do
		if [ "$1" = "$child" ]; then how=$2; fi
		shift
	done
done </proc/$$/fd/7

signal=
case $how in
Done) rc=0 ;;
Done\(*\)) rc=${how#Done\(} rc=${rc%\)} ;;
Exit | Running | Stopped* | '') rc=$waited ;;
*) signal=yes rc=$waited ;;
esac
if [ -z "$rc" ] && [ -n "$signal" ]; then
	# No wait here collected the child, and a wait now may keep answering
	# 145 for a CHLD trap bash never clears. A command substitution starts
	# with no pending traps and a copy of the job table: its wait answers.
	rc=$(wait "$child" 2>/dev/null; printf %s "$?")
	case $rc in 129 | 1[3-8][0-9] | 19[0-2]) [ "$rc" != 145 ] || rc= ;; *) rc= ;; esac
fi
if [ -z "$rc" ]; then
	signal=
	wait "$child"
	rc=$?
fi
trap - CHLD
if [ -n "$signal" ]; then printf '%s\n' "$((rc - 128))" >"$state/signal"; fi
printf '%s\n' "$rc" >"$state/exit-code"
finish "$rc" "${signal:+$((rc - 128))}"
