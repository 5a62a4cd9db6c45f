# sandtop wrapper, body: the end of the inner half, run once the group is
# published, the state files exist, child_env holds the child
# environment, fd 7 is an unlinked scratch file and fd 8 keeps the sentinel
# (see guard.bash) alive, and fds 5 and 6 are the program's stdout and
# stderr (see inner.bash). It starts the requested argv and publishes how it
# ended: its exit code, or the signal that killed it.
#
# Only bash's job table knows whether a status of 128+n was an exit code or
# signal n, and `wait` on the child is what loses it: in posix mode a wait
# that collects the child deletes the job (and then may still answer 145
# for a CHLD trap), and outside posix mode bash deletes a dead job at its
# next foreground command. So the child is never waited for until `jobs -l`
# has said how it ended. In posix mode bash keeps a dead job for the last
# asynchronous pid ($!, the child: nothing is started in the background
# after it) until `jobs` or `wait` reports it; we block in `wait` on the
# sentinel instead, which a CHLD trap cuts short, and look again.

# finish ends the inner half with the program's status; the outer half
# re-raises a fatal signal (see outer.bash).
finish() {
	# Reap the sentinel here: an orphaned zombie would be listed as a member
	# of the group until whoever inherits it reaps it. SIGKILL, because it
	# ignores the signals a group is sent and something might still hold fd 8;
	# sent while fd 8 still keeps it reading, so it cannot have ended and
	# been reaped (its pid free for a stranger) before the kill. The CHLD
	# trap may cut the wait short (145): wait again.
	if [ -n "$sentinel" ]; then
		kill -s KILL "$sentinel" 2>/dev/null
		exec 8>&-
		for _ in 1 2 3 4 5; do
			wait "$sentinel" 2>/dev/null
			[ $? = 145 ] || break
		done
	fi
	exit "$1"
}

# child_alive says whether the child exists and is not a zombie.
child_alive() {
	local key st
	while read -r key st _; do
		if [ "$key" = State: ]; then
			[ "$st" != Z ] && [ "$st" != X ]
			return
		fi
	done 2>/dev/null <"/proc/$child/status"
	return 1
}

# until_child_runs_program returns once the child's argv is neither ours
# (the forked shell) nor env's, or the child is gone, or after a second at
# most (a program that is itself "env -i --default-signal"). It spins, and
# reads as little as it can: bash 5.2 loses a trapped signal that lands in
# `read -t` (the one sleep it has without a fork) in most tries, and now
# and then one that lands in other reading builtins.
until_child_runs_program() {
	local a0 a1 own0 own1 tries=0 start=${EPOCHREALTIME/[.,]/}
	{ IFS= read -r -d '' own0 && IFS= read -r -d '' own1; } <"/proc/$$/cmdline"
	while :; do
		a0= a1=
		{ IFS= read -r -d '' a0 && IFS= read -r -d '' a1; } 2>/dev/null <"/proc/$child/cmdline" || :
		# A zombie's argv is empty, and so, briefly, is one in execve.
		if [ -z "$a0" ] && ! child_alive; then return; fi
		if [ -n "$a0" ] && { [ "$a0" != "$own0" ] || [ "$a1" != "$own1" ]; } && { [ "$a0" != "$env_bin" ] || [ "$a1" != -i ]; }; then
			return
		fi
		tries=$((tries + 1))
		if [ $((tries % 64)) = 0 ]; then
			if [ -z "$start" ] || [ $((${EPOCHREALTIME/[.,]/} - start)) -gt 1000000 ]; then return; fi
		fi
	done
}

# env treats a leading NAME=VALUE word as an assignment, so such a program
# name is run through bash's exec instead.
case $1 in *=*) set -- "$BASH" -c 'exec -- "$@"' sandtop-exec "$@" ;; esac

if [ -n "$pending" ]; then
	printf '%s\n' "$pending" >"$state/signal"
	printf '%s\n' "$((pending + 128))" >"$state/exit-code"
	finish "$((pending + 128))"
fi

umask "$user_umask"
# Job listings in the C locale, so "Done" and "Exit" read as such.
LC_ALL=C
# Set here, after the process substitutions (bash 5.0 has none in posix
# mode). The trap only notes that some child changed; the loop below looks.
set -o posix
woke= waited= renewed=0
trap 'woke=1' CHLD
# Asynchronous commands get SIGINT/SIGQUIT ignored and stdin from /dev/null
# unless told otherwise; undo both.
if [ "$stdin_mode" = ignore ]; then
	"$env_bin" -i --default-signal "${child_env[@]}" "$@" </dev/null >&5 2>&6 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- &
else
	"$env_bin" -i --default-signal "${child_env[@]}" "$@" <&0 >&5 2>&6 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- &
fi
child=$!
# Until the child has exec'd past env, a group signal can be lost in it: its
# forked copy of us still runs our traps, and env has not yet reset what bash
# ignores for asynchronous commands. Our traps keep catching until we have
# seen the program run (or the child gone), so such a signal is recorded
# here and sent on. One landing just before we look may then reach the
# program twice; that is better than never.
until_child_runs_program
# From here on we outlive group signals so the status gets published; the
# child got every signal back at its default through env --default-signal.
trap '' $quiet
if [ -n "$pending" ]; then kill -s "$pending" "$child" 2>/dev/null; fi
exec 5>&- 6>&- 0</dev/null
unset child_env

# how_child_ended lists the jobs into fd 7's file and sets how to the
# child's state as listed: "Running", "Stopped", "Done", "Done(3)",
# "Exit 3", or the first word of a signal's name ("Terminated",
# "Segmentation"); empty when the child is not listed at all.
how_child_ended() {
	local line
	how=
	jobs -l >"/proc/$$/fd/7"
	while IFS= read -r line; do
		case $line in \[*) ;; *) continue ;; esac
		set -f
		set -- $line
		set +f
		if [ "$2" = "$child" ]; then
			how=$3
			if [ "$3" = Exit ]; then how="Exit $4"; fi
		fi
	done <"/proc/$$/fd/7"
}

# signal_named prints 128+n for the first word of bash's description of
# signal n in a C-locale job listing, or 255 when the word is unknown.
signal_named() {
	case $1 in
	Hangup) echo 129 ;;
	Interrupt) echo 130 ;;
	Quit) echo 131 ;;
	Illegal) echo 132 ;;
	Trace/breakpoint) echo 133 ;;
	Aborted) echo 134 ;;
	Bus) echo 135 ;;
	Floating) echo 136 ;;
	Killed) echo 137 ;;
	Segmentation) echo 139 ;;
	Broken) echo 141 ;;
	Alarm) echo 142 ;;
	Terminated) echo 143 ;;
	CPU) echo 152 ;;
	File) echo 153 ;;
	Virtual) echo 154 ;;
	Profiling) echo 155 ;;
	Bad) echo 159 ;;
	*) echo 255 ;;
	esac
}

# ${woke:-$sentinel} makes the check and the wait one command: a CHLD trap
# that ran before it sets woke and `wait 1` returns at once; one that comes
# later is pending when wait starts (or interrupts it) and wait returns 145.
# Either way we look again, so no death can slip between look and wait.
while :; do
	woke=
	how_child_ended
	case $how in Running* | Stopped*) ;; *) break ;; esac
	if [ -n "$sentinel" ]; then
		wait "${woke:-$sentinel}"
		if [ $? != 145 ] && [ -z "$woke" ]; then
			# Only a CHLD (145, its trap may run after this check) ends this
			# wait while the sentinel lives. Any other answer is the
			# sentinel's own end (something killed it), and bash would give
			# it again at once for every later wait on it, so the loop would
			# spin. A new sentinel keeps the child's status readable from the
			# job table; a CHLD lost while it is made is caught by the
			# listing at the top of the loop. Three in a row that end at once
			# mean a bash without waitable process substitutions (127): wait
			# for the child itself.
			if [ "$renewed" -lt 3 ]; then
				renewed=$((renewed + 1))
				exec 8>&-
				exec 8> >(exec >/dev/null 3>&- 4>&- 7>&-; trap '' $quiet; read -r _)
				sentinel=$!
			else
				sentinel=
			fi
		else
			renewed=0
		fi
	else
		# The trap stays (see below), so a CHLD from tee or head can cut
		# this wait short with 145: wait again while the child still runs.
		trap : CHLD
		while :; do
			wait "$child"
			waited=$?
			[ "$waited" = 145 ] || break
			how_child_ended
			case $how in Running* | Stopped*) ;; *) break ;; esac
		done
		# Only a listing of the job can tell 128+n from signal n now.
		how_child_ended
		if [ -z "$how" ]; then how=waited; fi
		break
	fi
done
# The CHLD trap is never reset to the default: bash 5.2 crashes with
# SIGSEGV (a NULL trap string in run_sigchld_trap) when a CHLD trap is
# still pending at that moment, and the group would be published as a
# SEGV death. It is made a no-op instead; a wait below that it cuts short
# answers 145, which is asked again.
trap : CHLD

signal=
case $how in
Done) rc=0 ;;
Done\(*\)) rc=${how#Done\(} rc=${rc%\)} ;;
Exit\ *) rc=${how#Exit } ;;
waited)
	# The job was gone before it was listed (only without a sentinel):
	# 128+n is taken for signal n, the common case.
	rc=$waited
	case $rc in 129 | 1[3-8][0-9] | 19[0-2]) signal=$((rc - 128)) ;; esac
	;;
*)
	if [ -n "$waited" ]; then
		rc=$waited
	else
		# The listing names a signal. A CHLD trap pending or arriving can
		# make this wait answer 145 (128+SIGCHLD); no child dies of
		# SIGCHLD, so 145 here is never the answer: ask again.
		# If bash has dropped the job meanwhile (127), the listing's name
		# is all that is left.
		tries=0
		while :; do
			wait "$child"
			rc=$?
			tries=$((tries + 1))
			[ "$rc" = 145 ] && [ "$tries" -lt 5 ] || break
		done
		if [ "$rc" = 145 ] || [ "$rc" = 127 ]; then
			rc=$(signal_named "$how")
		fi
	fi
	case $rc in 129 | 1[3-8][0-9] | 19[0-2]) signal=$((rc - 128)) ;; esac
	;;
esac
case $rc in '' | *[!0-9]*) rc=255 ;; esac
if [ -n "$signal" ]; then printf '%s\n' "$signal" >"$state/signal"; fi
printf '%s\n' "$rc" >"$state/exit-code"
finish "$rc"
