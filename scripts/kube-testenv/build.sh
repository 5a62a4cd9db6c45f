#!/usr/bin/env bash
# Builds the two control-plane binaries the Kubernetes tests need, etcd and
# kube-apiserver, from the modules pinned in etcd/ and kube-apiserver/, into
# a cache directory that outlives the checkout. A binary is rebuilt only when
# its pins (go.mod, go.sum) change, so only the first build is slow: about
# 12 to 35 minutes on two busy cores.
#
#   KUBE_TESTENV_BIN   where the binaries go
#                      (default ${XDG_CACHE_HOME:-$HOME/.cache}/kube-testenv/bin)
#   KUBE_TESTENV_NICE  nice level of the compiler (default 15)
#
# Prints the binaries' directory on stdout.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
bin=${KUBE_TESTENV_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/kube-testenv/bin}
mkdir -p "$bin"

# build NAME DIR PACKAGE
build() {
	local out=$bin/$1 pins
	pins=$(cat "$2/go.mod" "$2/go.sum" | sha256sum | cut -c1-16)
	if [[ -x $out && $(cat "$out.stamp" 2>/dev/null) == "$pins" ]]; then
		echo "kube-testenv: $1 is built ($out)" >&2
		return
	fi
	echo "kube-testenv: building $1; the first time takes many minutes" >&2
	local started=$SECONDS
	(cd "$2" && nice -n "${KUBE_TESTENV_NICE:-15}" go build -trimpath -ldflags='-s -w' -o "$out.partial" "$3")
	mv -f "$out.partial" "$out"
	echo "$pins" >"$out.stamp"
	echo "kube-testenv: $1 built in $((SECONDS - started)) s" >&2
}

build etcd "$src/etcd" .
build kube-apiserver "$src/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
echo "$bin"
