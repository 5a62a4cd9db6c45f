# sandtop wrapper, direct form, for a daemon that has the session-dir
# capability: the daemon created the state directory, made this bash the
# leader of a new session and wrote its pid before the start event, so the
# group is already published. This does the rest of the outer half's work
# (tools, state files, the child environment from stdin) and then runs the
# body, re-raising the command's fatal signal itself. The parameters keep
# the inner half's layout; the tool slots are "-".
state=$1 stdin_mode=$2 out_cap=$3 err_cap=$4 tag=$5
shift 11 # the ten parameters and "--"
# (guard.bash comes first: the diagnostics fds and the signal traps.)

# Spawn strips this line from stdout; nothing else has written there yet.
printf 'sandtop-published %s\n' "$$" >&3

fail() { printf 'sandtop-wrapper: %s\n' "$1" >&4; exit 125; }
reraise=1
prepare
create_state_files "$@"
read_environment
child_env=("${entries[@]}")
unset entries
exec 7<>"$state/.jobs"
"$rm_bin" -f -- "$state/.jobs"

