#!/usr/bin/env bash
# Builds E2B's envd from a copy of e2b-dev/infra, for the tests and the
# bench runs against stock envd (SANDTOP_TEST_ENVD, go run ./bench --envd-bin).
#
#   scripts/build-envd.sh SOURCE [OUT]
#
# SOURCE is a checkout of e2b-dev/infra (a directory holding packages/envd
# and packages/shared) or a bare git directory of it, whose HEAD is used.
# OUT defaults to ./envd. Modules come from the Go module proxy. Nothing of
# envd's source is copied into this repository.
#
# Run it as the tests do, as root on loopback without a token:
#   OUT -isnotfc -no-cgroups -port 49984
set -euo pipefail
src=${1:?usage: build-envd.sh SOURCE [OUT]}
out=$(realpath -m "${2:-envd}")
tmp=
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
if [ ! -d "$src/packages/envd" ]; then
	# A bare git directory: take packages/envd and packages/shared from HEAD.
	git --git-dir="$src" rev-parse --verify -q HEAD >/dev/null || {
		echo "build-envd.sh: $src is neither a checkout of e2b-dev/infra nor its git directory" >&2
		exit 2
	}
	tmp=$(mktemp -d)
	git --git-dir="$src" archive HEAD packages/envd packages/shared | tar -x -C "$tmp"
	src=$tmp
fi
cd "$src/packages/envd"
CGO_ENABLED=0 go build -trimpath -o "$out" .
echo "$out"
