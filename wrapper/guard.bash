# sandtop wrapper, guard: the first lines of the inner half and of the
# direct form, the leaders of the program's group.

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
