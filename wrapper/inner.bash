# sandtop wrapper, inner half: the leader of a new session and process group
# (setsid --wait), started under env -i. It publishes the group, runs the
# requested argv in the child environment, and publishes its exit status.
# (guard.bash comes first: the diagnostics fds and the signal traps.)
state=$1 stdin_mode=$2 out_cap=$3 err_cap=$4 user_umask=$5
env_bin=$6 tee_bin=$7 head_bin=$8 rm_bin=$9 stdbuf_bin=${10}
shift 11 # the ten parameters and "--"

# fds 5 and 6: the program's stdout and stderr. A spilled stream goes
# through tee and head, made before the group is published: bash 5.2 loses
# a trapped signal that lands while it sets up a process substitution (a
# soak of early group signals caught it there), and before publication no
# group signal can come.
#
# head writes a regular file through stdio and would hold up to a block back
# until it exits, leaving a long-running program's spill empty; stdbuf -o0
# (when the sandbox has it) makes it write each chunk as it reads it.
capped=("$head_bin")
if [ -n "$stdbuf_bin" ]; then capped=("$stdbuf_bin" -o0 "$head_bin"); fi
if [ "$out_cap" -ge 0 ]; then
	exec 5> >(trap '' $quiet; exec 8>&-; exec "$tee_bin" --output-error=warn-nopipe >("${capped[@]}" -c "$out_cap" >"$state/stdout.log"))
else
	exec 5>&3
fi
if [ "$err_cap" -ge 0 ]; then
	exec 6> >(trap '' $quiet; exec 8>&-; exec "$tee_bin" --output-error=warn-nopipe >("${capped[@]}" -c "$err_cap" >"$state/stderr.log") >&4)
else
	exec 6>&4
fi

printf '%s\n' "$$" >"$state/pid"
# Publish at once: Spawn waits for this line, and everything below (the
# environment, rm) costs time that need not delay it. Nothing else has
# written to fd 3 yet. The same line on fd 4 ends whatever bash itself wrote to stderr before the guard: the
# daemon may deliver the two streams in either order, so a reader tells
# the program's stderr from ours by this line, not by stdout's.
printf 'sandtop-published %s\n' "$$" >&3
printf 'sandtop-published %s\n' "$$" >&4
mapfile -d '' child_env <"$state/environment"
# fd 7: an unlinked scratch file for the body's job listings.
exec 7<>"$state/.jobs"
"$rm_bin" -f -- "$state/environment" "$state/.jobs"

