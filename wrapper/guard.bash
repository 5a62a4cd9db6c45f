# sandtop wrapper, guard: the first lines of the inner half, the leader of
# the program's group.

# fd 3/4: the daemon's stdout/stderr pipes. Our own diagnostics (such as
# bash's job notices) must never reach the program's streams.
exec 3>&1 4>&2 2>/dev/null

# Signals a group is sent that must not end the wrapper, its sentinel or
# its tee and head (their death would cut the program's output short, not
# end the program).
quiet='HUP INT QUIT TERM USR1 USR2 SEGV ALRM'

# fd 8: the only writer of a pipe that a sentinel child reads until it
# ends, which is when we end. The body blocks in `wait` on the sentinel
# (see body.bash). Made before the traps below, while a group signal still
# ends us outright; the sentinel ignores the signals a group is sent.
exec 8> >(exec >/dev/null 3>&- 4>&-; trap '' $quiet; read -r _)
sentinel=$!

# A group signal may arrive before the child exists; remember it (a trap,
# unlike an ignore, is not inherited by the child) and act on it below.
pending=
trap 'pending=15' TERM
trap 'pending=2' INT
trap 'pending=1' HUP
trap 'pending=3' QUIT
