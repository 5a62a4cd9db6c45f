# sandtop terminal runner. Started as the PTY's first process:
#   /bin/bash terminal_runner.bash STATE_DIR
# It loads the requested argv and environment from private NUL-framed files,
# deletes every private file before anything else can run, prints the
# private output boundary (no newline), then becomes the requested program.
# Everything the PTY shows before the boundary belongs to the bootstrap and
# is discarded by the host; everything after it belongs to the program.
set -u
dir=${1:?usage: terminal_runner.bash STATE_DIR}
env_entries=()
argv=()
marker=
mapfile -d '' -t env_entries <"$dir/environment" || exit 125
mapfile -d '' -t argv <"$dir/argv" || exit 125
# The marker file has no trailing newline, so read reports EOF yet fills marker.
IFS= read -r marker <"$dir/output-marker" || [[ -n $marker ]] || exit 125
rm -f -- "$dir/environment" "$dir/argv" "$dir/output-marker" "$dir/runner.bash"
((${#argv[@]} > 0)) || exit 125
printf '%s' "$marker"
# "--" keeps an empty environment from letting argv[0] be read as an option.
exec env -i -- "${env_entries[@]}" "${argv[@]}"
