# sandtop wrapper, the functions the outer half (outer.bash, which follows)
# runs: find the tools, keep the user's umask, create the state files, and
# read the child environment from the head of stdin into "entries". The
# caller defines fail, and sets state, out_cap, err_cap and tag.

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

# prepare finds the tools the body needs and keeps the user's umask for the
# requested program; only our own state is private.
prepare() {
	find_tool env env_bin
	find_tool tee tee_bin
	find_tool head head_bin
	find_tool rm rm_bin
	# Optional: without it, spills lag behind a running program (see the body).
	stdbuf_bin=
	look_up stdbuf stdbuf_bin
	user_umask=0022
	local key value
	while read -r key value; do
		if [ "$key" = Umask: ]; then user_umask=$value; fi
	done </proc/$$/status
	umask 077
}

# create_state_files makes the files the layout promises, empty until
# published, plus the tag and the requested argv (so a finished group can
# still say what it ran).
create_state_files() {
	: >"$state/exit-code" || fail "cannot write into $state"
	if [ "$out_cap" -ge 0 ]; then : >"$state/stdout.log"; fi
	if [ "$err_cap" -ge 0 ]; then : >"$state/stderr.log"; fi
	if [ -n "$tag" ]; then printf '%s\n' "$tag" >"$state/tag"; fi
	printf '%s\0' "$@" >"$state/argv"
}

# read_environment reads "<count>\n" and that many NUL-terminated entries.
# read stops at each NUL and never reads past the payload, so the rest of
# stdin stays for the program.
read_environment() {
	local env_count entry i
	IFS= read -r env_count || fail 'missing environment header on stdin'
	case $env_count in '' | *[!0-9]*) fail 'malformed environment header' ;; esac
	entries=()
	for ((i = 0; i < env_count; i++)); do
		IFS= read -r -d '' entry || fail 'truncated environment on stdin'
		entries+=("$entry")
	done
}
