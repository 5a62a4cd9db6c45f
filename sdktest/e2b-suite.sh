#!/usr/bin/env bash
# Runs E2B's own JS SDK test files for the envd (tests/sandbox/{commands,
# files,pty} of e2b-dev/E2B at a pinned commit), unchanged, in the SDK's
# debug mode against an envd at a given URL. Nothing of E2B's is kept in
# this repository: the files are extracted from a git clone (or a checkout)
# you point at, into a temporary directory. See README.md.
#
#   E2B_GIT_DIR=/path/to/E2B.git sdktest/e2b-suite.sh [ENVD_URL [VITEST_ARG...]]
#   E2B_CHECKOUT=/path/to/E2B    sdktest/e2b-suite.sh [ENVD_URL [VITEST_ARG...]]
#
# ENVD_URL defaults to http://127.0.0.1:49983 (debug mode's envd port).
# Before the tests, the envd gets a POST /init as E2B's control plane sends
# it to a fresh sandbox of its base template (default user "user", workdir
# /home/user); E2B_SUITE_INIT=0 skips that. Arguments after the URL go to
# vitest (e.g. -t 'write multiple files').
#
# Exit status: vitest's (0 all passed), or 77 with "SKIPPED: ..." on stderr
# when the E2B sources are not available (CI has no GitHub access).
set -euo pipefail

# The pinned commit and the SDK version it carries.
E2B_COMMIT=b8029973aa7da5f741f7bb1a9f833b38a0885438
E2B_SDK_VERSION=2.45.0
# The SDK's runtime dependencies and vitest, at the versions its lockfile
# (pnpm-lock.yaml at E2B_COMMIT) resolves them to; error-stack-parser-es is
# a devDependency the SDK's source imports (its build bundles it).
deps='{
  "@bufbuild/protobuf": "2.12.1",
  "@connectrpc/connect": "2.1.2",
  "@connectrpc/connect-web": "2.1.2",
  "chalk": "5.3.0",
  "compare-versions": "6.1.1",
  "dockerfile-ast": "0.7.1",
  "error-stack-parser-es": "2.0.1",
  "glob": "13.0.6",
  "openapi-fetch": "0.14.1",
  "platform": "1.3.6",
  "tar": "7.5.21",
  "undici": "7.29.0",
  "undici8": "npm:undici@8.10.0",
  "vite": "6.4.3",
  "vitest": "4.1.10"
}'
dirs=(packages/js-sdk/tests/sandbox/commands packages/js-sdk/tests/sandbox/files packages/js-sdk/tests/sandbox/pty)

url=${1:-http://127.0.0.1:49983}
url=${url%/}
shift || true

skip() {
  echo "SKIPPED: E2B's JS SDK suite did not run: $*" >&2
  echo "SKIPPED: set E2B_GIT_DIR to a clone of e2b-dev/E2B holding commit $E2B_COMMIT (or E2B_CHECKOUT to a checkout of it)" >&2
  exit 77
}

work=$(mktemp -d "${TMPDIR:-/tmp}/e2b-suite.XXXXXX")
trap 'rm -rf "$work"' EXIT
src="$work/js-sdk"
mkdir -p "$src"

# Extract packages/js-sdk (src/, tests/, tsconfig.json, package.json) at the
# pinned commit.
if [ -n "${E2B_GIT_DIR:-}" ]; then
  git --git-dir="$E2B_GIT_DIR" cat-file -e "$E2B_COMMIT^{commit}" 2>/dev/null ||
    skip "$E2B_GIT_DIR has no commit $E2B_COMMIT"
  git --git-dir="$E2B_GIT_DIR" archive "$E2B_COMMIT" packages/js-sdk | tar -x -C "$work"
  mv "$work/packages/js-sdk"/* "$src"/ && rm -rf "$work/packages"
elif [ -n "${E2B_CHECKOUT:-}" ]; then
  [ -d "$E2B_CHECKOUT/packages/js-sdk/tests/sandbox" ] || skip "$E2B_CHECKOUT has no packages/js-sdk/tests/sandbox"
  if git -C "$E2B_CHECKOUT" cat-file -e "$E2B_COMMIT^{commit}" 2>/dev/null; then
    git -C "$E2B_CHECKOUT" archive "$E2B_COMMIT" packages/js-sdk | tar -x -C "$work"
    mv "$work/packages/js-sdk"/* "$src"/ && rm -rf "$work/packages"
  else
    echo "e2b-suite: $E2B_CHECKOUT is not a git checkout holding $E2B_COMMIT; using its files as they are" >&2
    cp -r "$E2B_CHECKOUT/packages/js-sdk/src" "$E2B_CHECKOUT/packages/js-sdk/tests" \
      "$E2B_CHECKOUT/packages/js-sdk/package.json" "$E2B_CHECKOUT/packages/js-sdk/tsconfig.json" "$src"/
  fi
else
  skip "neither E2B_GIT_DIR nor E2B_CHECKOUT is set"
fi
got=$(node -p "require('$src/package.json').version")
[ "$got" = "$E2B_SDK_VERSION" ] || { echo "e2b-suite: the SDK at $E2B_COMMIT is $got, not $E2B_SDK_VERSION" >&2; exit 1; }
for d in "${dirs[@]}"; do
  [ -d "$src/${d#packages/js-sdk/}" ] || { echo "e2b-suite: $d is missing at $E2B_COMMIT" >&2; exit 1; }
done

# Dependencies: installed once per pin into a cache directory, then linked.
cache=${E2B_SUITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/sandtop-e2b-suite}/$E2B_COMMIT
want=$(node -e '
  const deps = JSON.parse(process.argv[1]);
  console.log(JSON.stringify({ name: "e2b-suite-deps", private: true, dependencies: deps }, null, 2));
' "$deps")
if [ ! -d "$cache/node_modules/vitest" ] || [ "$(cat "$cache/package.json" 2>/dev/null)" != "$want" ]; then
  mkdir -p "$cache"
  printf '%s\n' "$want" >"$cache/package.json"
  echo "e2b-suite: installing the SDK's dependencies and vitest into $cache" >&2
  (cd "$cache" && npm install --no-audit --no-fund --loglevel=error --no-save >&2)
fi
ln -s "$cache/node_modules" "$src/node_modules"

# The vitest settings of the SDK's "unit" project (its vitest.config.mts),
# minus its browser/dotenv imports, limited to the envd-facing directories.
cat >"$src/e2b-suite.config.mts" <<'EOF'
import { defineConfig } from 'vitest/config'
export default defineConfig({
  test: {
    include: ['tests/sandbox/commands/**/*.test.ts', 'tests/sandbox/files/**/*.test.ts', 'tests/sandbox/pty/**/*.test.ts'],
    isolate: true,
    globals: false,
    testTimeout: 30_000,
    environment: 'node',
    setupFiles: ['tests/globalFetchFallback.setup.ts'],
    deps: { interopDefault: true },
  },
})
EOF

if [ "${E2B_SUITE_INIT:-1}" != 0 ]; then
  # What E2B's orchestrator sends a new sandbox of its base template (no
  # access token in debug mode: the SDK sends none).
  body=$(printf '{"defaultUser":"user","defaultWorkdir":"/home/user","envVars":{"E2B_SANDBOX":"true"},"timestamp":"%s"}' "$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)")
  code=$(curl -sS -o "$work/init.out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data "$body" "$url/init") ||
    { echo "e2b-suite: POST $url/init failed" >&2; exit 1; }
  [ "$code" = 204 ] || { echo "e2b-suite: POST $url/init answered $code: $(head -c 500 "$work/init.out")" >&2; exit 1; }
fi

echo "e2b-suite: E2B $E2B_COMMIT (SDK $E2B_SDK_VERSION) against $url" >&2
cd "$src"
E2B_DEBUG=true E2B_SANDBOX_URL="$url" node node_modules/vitest/vitest.mjs run \
  --config e2b-suite.config.mts --no-file-parallelism "$@"
