# sandtop wrapper, inner half: the leader of a new session and process group
# (setsid --wait), started under env -i. It publishes the group, runs the
# requested argv in the child environment, and publishes its exit status.
state=$1 stdin_mode=$2 out_cap=$3 err_cap=$4 user_umask=$5
env_bin=$6 tee_bin=$7 head_bin=$8 rm_bin=$9
shift 10 # the nine parameters and "--"

# fd 3/4: the daemon's stdout/stderr pipes. Our own diagnostics (such as
# bash's job notices) must never reach the program's streams.
exec 3>&1 4>&2 2>/dev/null

# A group signal may arrive before the child exists; remember it (a trap,
# unlike an ignore, is not inherited by the child) and act on it below.
pending=
trap 'pending=15' TERM
trap 'pending=2' INT
trap 'pending=1' HUP
trap 'pending=3' QUIT

printf '%s\n' "$$" >"$state/pid"
mapfile -d '' child_env <"$state/environment"
# Job notices go to an unlinked file; they are how we learn whether the child
# died from a signal, which $? alone cannot tell (143 vs SIGTERM).
exec 7<>"$state/.jobs"
"$rm_bin" -f -- "$state/environment" "$state/.jobs"

if [ "$out_cap" -ge 0 ]; then
	exec 5> >("$tee_bin" --output-error=warn-nopipe >("$head_bin" -c "$out_cap" >"$state/stdout.log"))
else
	exec 5>&3
fi
if [ "$err_cap" -ge 0 ]; then
	exec 6> >("$tee_bin" --output-error=warn-nopipe >("$head_bin" -c "$err_cap" >"$state/stderr.log") >&4)
else
	exec 6>&4
fi

# env treats a leading NAME=VALUE word as an assignment, so such a program
# name is run through bash's exec instead.
case $1 in *=*) set -- "$BASH" -c 'exec -- "$@"' sandtop-exec "$@" ;; esac

printf 'sandtop-published %s\n' "$$" >&3

if [ -n "$pending" ]; then
	printf '%s\n' "$pending" >"$state/signal"
	printf '%s\n' "$((pending + 128))" >"$state/exit-code"
	exit "$((pending + 128))"
fi

umask "$user_umask"
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

while :; do
	wait "$child"
	rc=$?
	kill -0 "$child" 2>/dev/null || break # else a pending trap cut the wait short
done
trap - CHLD

how=
while IFS= read -r line; do
	set -f
	set -- $line
	while [ $# -gt 1 ]; do
		if [ "$1" = "$child" ]; then how=$2; fi
		shift
	done
done </proc/$$/fd/7

if [ "$rc" -gt 128 ]; then
	case $how in Done | Exit | Running | Stopped | '') ;; *) printf '%s\n' "$((rc - 128))" >"$state/signal" ;; esac
fi
printf '%s\n' "$rc" >"$state/exit-code"
exit "$rc"
