#!/usr/bin/env bash
# Runs E2B's JS SDK envd tests (e2b-suite.sh) against a daemon set up as a
# fresh E2B sandbox has its envd: run as root, a sandbox user "user" (home
# /home/user, passwordless sudo), POST /init naming that user and workdir.
# The same for sandtop's daemon and for E2B's stock envd, so their counts
# compare:
#
#   sdktest/e2b-sandbox.sh sandtop ./sandtop   # sandtop serve
#   sdktest/e2b-sandbox.sh envd /path/to/envd  # envd -isnotfc -no-cgroups
#
# Needs the E2B sources (E2B_GIT_DIR or E2B_CHECKOUT, see e2b-suite.sh):
# without them it changes nothing, says SKIPPED and exits 77. With them it
# needs root; it creates "user" if missing, and with E2B_SUITE_FRESH_HOME=1
# it first empties /home/user back to /etc/skel (tests leave files there
# that make a second run differ). The daemon listens on 127.0.0.1 (envd: all
# interfaces) port E2B_SUITE_PORT (49983) and is stopped afterwards.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

kind=${1:-}
bin=${2:-}
case "$kind" in
sandtop | envd) ;;
*)
  echo "usage: $0 sandtop|envd BINARY [VITEST_ARG...]" >&2
  exit 2
  ;;
esac
shift 2
if [ -z "${E2B_GIT_DIR:-}${E2B_CHECKOUT:-}" ]; then
  echo "SKIPPED: E2B's JS SDK suite did not run against $kind: neither E2B_GIT_DIR nor E2B_CHECKOUT is set (see sdktest/README.md)" >&2
  exit 77
fi
[ -x "$bin" ] || { echo "e2b-sandbox: $bin is not an executable" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "e2b-sandbox: run as root: the daemon runs as root with a sandbox user, as E2B's envd does" >&2; exit 1; }
command -v sudo >/dev/null || { echo "e2b-sandbox: install sudo: E2B's sandbox user has passwordless sudo and a test uses it" >&2; exit 1; }

if ! id user >/dev/null 2>&1; then
  useradd -m -s /bin/bash user
  echo 'user ALL=(ALL:ALL) NOPASSWD: ALL' >/etc/sudoers.d/e2b-sandbox-user
  chmod 440 /etc/sudoers.d/e2b-sandbox-user
elif [ "${E2B_SUITE_FRESH_HOME:-0}" = 1 ]; then
  rm -rf /home/user
  cp -rT /etc/skel /home/user
  chown -R user:user /home/user
fi

port=${E2B_SUITE_PORT:-49983}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/e2b-sandbox.XXXXXX")
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; fi
  # "write multiple files" leaves the empty directories /0, /2, …, /8.
  for d in /0 /2 /4 /6 /8; do rmdir "$d" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
case "$kind" in
sandtop)
  mkdir -p "$tmp/run" "$tmp/home" && chmod 700 "$tmp/run"
  XDG_RUNTIME_DIR="$tmp/run" XDG_STATE_HOME="$tmp/xdg-state" XDG_CONFIG_HOME="$tmp/config" HOME="$tmp/home" \
    "$bin" serve --listen "127.0.0.1:$port" --state-dir "$tmp/state" --kill-on-exit >"$tmp/daemon.log" 2>&1 &
  pid=$!
  ;;
envd)
  (cd "$tmp" && exec "$bin" -isnotfc -no-cgroups -port "$port") >"$tmp/daemon.log" 2>&1 &
  pid=$!
  ;;
esac
up=0
for _ in $(seq 100); do
  if curl -fsS -o /dev/null "http://127.0.0.1:$port/health" 2>/dev/null; then up=1; break; fi
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
if ((!up)); then
  echo "e2b-sandbox: $kind did not answer on 127.0.0.1:$port; its log:" >&2
  tail -n 30 "$tmp/daemon.log" >&2
  exit 1
fi
status=0
"$here/e2b-suite.sh" "http://127.0.0.1:$port" "$@" || status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 77 ]; then
  echo "e2b-sandbox: the suite failed against $kind; the end of its log:" >&2
  tail -n 30 "$tmp/daemon.log" >&2
fi
exit "$status"
