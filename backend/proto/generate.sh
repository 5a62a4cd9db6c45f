#!/usr/bin/env bash
# Regenerates backend/gen from backend/proto with protoc and the plugins
# pinned by go.mod's tool directive. Needs protoc (Debian: protobuf-compiler).
# With --check it regenerates into a scratch dir and fails on any drift.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
out="backend/gen"
check=0
if [[ "${1:-}" == "--check" ]]; then
  check=1
  out="$(mktemp -d)"
  trap 'rm -rf "$out" "$bin"' EXIT
fi
bin="$(mktemp -d)"
[[ $check == 1 ]] || trap 'rm -rf "$bin"' EXIT
go build -o "$bin/" google.golang.org/protobuf/cmd/protoc-gen-go connectrpc.com/connect/cmd/protoc-gen-connect-go
protos=(process/process.proto filesystem/filesystem.proto sandtop/v1/supervisor.proto)
mkdir -p "$out"
protoc -I backend/proto \
  --plugin=protoc-gen-go="$bin/protoc-gen-go" \
  --plugin=protoc-gen-connect-go="$bin/protoc-gen-connect-go" \
  --go_out="$out" --go_opt=paths=source_relative \
  --connect-go_out="$out" --connect-go_opt=paths=source_relative \
  "${protos[@]}"
if [[ $check == 1 ]]; then
  if ! diff -r "$out" backend/gen; then
    echo "backend/gen has drifted from backend/proto: run backend/proto/generate.sh" >&2
    exit 1
  fi
  echo "backend/gen matches backend/proto"
fi
