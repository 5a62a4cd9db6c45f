#!/usr/bin/env bash
# Stops what start.sh started in state directory DIR (default
# $KUBE_TESTENV_RUN) and removes DIR, unless KUBE_TESTENV_KEEP=1.
set -uo pipefail
run=${1:-${KUBE_TESTENV_RUN:-}}
[[ -n $run && -d $run ]] || { echo "usage: stop.sh DIR (the directory start.sh printed)" >&2; exit 2; }
for part in kube-apiserver etcd; do
	pidfile=$run/$part.pid
	[[ -f $pidfile ]] || continue
	pid=$(cat "$pidfile")
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.2
	done
	kill -KILL "$pid" 2>/dev/null
	rm -f "$pidfile"
done
[[ ${KUBE_TESTENV_KEEP:-0} == 1 ]] || rm -rf "$run"
